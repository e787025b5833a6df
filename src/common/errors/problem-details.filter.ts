import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../../config/app-config';
import { counter } from '../metrics';
import { isDomainError } from './domain-error';
import { buildProblem, sendProblem, STATUS_CODE_NAMES } from './problem-details';

/** Refused requests (401 and 403) by problem code. */
const authFailures = counter('auth_failures_total', 'Requests refused with 401 or 403, by problem code', ['code'] as const);

/** Characters of a presented API key logged with a refusal: the key's public prefix (`nftw_` and 8 more). */
const LOGGED_PREFIX_LENGTH = 13;

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/** The one place where errors become answers; nothing internal ever leaves through it. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');
  private readonly operatorDigest: Buffer | null;

  constructor(@Optional() config?: AppConfig) {
    this.operatorDigest = config?.operatorApiKey ? sha256(config.operatorApiKey) : null;
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const requestId = (req as Request & { id?: string }).id ?? null;

    if (isDomainError(exception)) {
      const error = exception;
      this.traceRefusal(req, error.status, error.code, requestId);
      sendProblem(res, buildProblem(error.status, error.code, error.detail, requestId, error.errors), error.headers);
      return;
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status >= 500) this.logger.error({ err: exception, requestId }, 'request failed');
      const { code, detail } = describeHttpException(exception, req);
      this.traceRefusal(req, status, code, requestId);
      sendProblem(res, buildProblem(status, code, detail, requestId));
      return;
    }
    const bodyParserStatus = bodyParserErrorStatus(exception);
    if (bodyParserStatus) {
      sendProblem(res, bodyParserProblem(exception, bodyParserStatus, requestId));
      return;
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.error({ err: exception, requestId }, 'database unavailable');
      sendProblem(res, buildProblem(503, 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', requestId), {
        'retry-after': '1',
      });
      return;
    }
    this.logger.error({ err: exception, requestId }, 'unexpected error');
    sendProblem(res, buildProblem(500, 'INTERNAL_ERROR', 'An unexpected error occurred.', requestId));
  }

  /** A 401 or 403 is logged (who, from where, why) and counted, so refused requests are traceable. */
  private traceRefusal(req: Request, status: number, code: string, requestId: string | null): void {
    if (status !== 401 && status !== 403) return;
    authFailures.inc({ code });
    const entry: RefusalLog = {
      requestId,
      status,
      code,
      ip: req.ip ?? null,
      keyPrefix: presentedKeyPrefix(req.headers?.authorization, this.operatorDigest),
    };
    this.logger.warn({ refused: entry }, 'request refused');
  }
}

export interface RefusalLog {
  requestId: string | null;
  status: number;
  code: string;
  /** The client address as Express derives it: through trusted proxies (TRUST_PROXY) only. */
  ip: string | null;
  /**
   * The first 13 characters of a presented API key (its public prefix); `operator` for the
   * operator key; null when nothing was presented, or something that is not an API key (13
   * characters of another secret would give most of it away).
   */
  keyPrefix: string | null;
}

/** What a refusal log line says about the credential presented. */
export function presentedKeyPrefix(authorization: string | undefined, operatorDigest: Buffer | null): string | null {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!token) return null;
  if (operatorDigest && timingSafeEqual(sha256(token), operatorDigest)) return 'operator';
  return token.startsWith('nftw_') ? token.slice(0, LOGGED_PREFIX_LENGTH) : null;
}

function describeHttpException(exception: HttpException, req: Request): { code: string; detail: string } {
  const status = exception.getStatus();
  const body = exception.getResponse();
  const custom = typeof body === 'object' && body !== null ? (body as { code?: unknown; message?: unknown }) : {};
  if (typeof custom.code === 'string') {
    return { code: custom.code, detail: typeof custom.message === 'string' ? custom.message : exception.message };
  }
  if (status === 404 && /^Cannot [A-Z]+ /.test(exception.message)) {
    return { code: 'ROUTE_NOT_FOUND', detail: `No route for ${req.method} ${req.path}.` };
  }
  // Nest's exceptions carry a string, or a list of strings from validation.
  const message = Array.isArray(custom.message)
    ? custom.message.join('; ')
    : typeof custom.message === 'string'
      ? custom.message
      : exception.message;
  return { code: STATUS_CODE_NAMES[status] ?? `HTTP_${status}`, detail: message };
}

type BodyParserError = { type?: string; status?: number; expose?: boolean };

export function bodyParserErrorStatus(error: unknown): number | null {
  const e = error as BodyParserError;
  if (typeof e?.type !== 'string' || typeof e.status !== 'number' || e.status < 400 || e.status >= 500) return null;
  return e.status;
}

export function bodyParserProblem(error: unknown, status: number, requestId: string | null) {
  const type = (error as BodyParserError).type;
  if (type === 'entity.parse.failed') {
    return buildProblem(400, 'MALFORMED_JSON', 'The request body is not valid JSON.', requestId);
  }
  if (type === 'entity.too.deep') {
    return buildProblem(400, 'JSON_TOO_DEEP', (error as Error).message, requestId);
  }
  if (type === 'entity.invalid.character') {
    return buildProblem(400, 'INVALID_CHARACTER', (error as Error).message, requestId);
  }
  if (type === 'entity.too.large') {
    return buildProblem(413, 'PAYLOAD_TOO_LARGE', 'The request body is too large.', requestId);
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return buildProblem(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.', requestId);
  }
  return buildProblem(status, STATUS_CODE_NAMES[status] ?? 'BAD_REQUEST', 'The request body could not be read.', requestId);
}

/**
 * Connection failures, plus the bounds on waiting for the database: a statement cancelled by
 * statement_timeout (57014), a lock wait past lock_timeout (55P03), a transaction closed for
 * idling (25P03) and, below, a pool with no free connection within DB_ACQUIRE_TIMEOUT.
 */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '57P01',
  '57P02',
  '57P03',
  '08006',
  '08003',
  '08001',
  // PgBouncer's own refusals while it cannot serve: server login failing or a server connection
  // lost (08P01), max_client_conn reached (53300, as PostgreSQL's max_connections).
  '08P01',
  '53300',
  '57014',
  '55P03',
  '25P03',
]);

function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; name?: string; message?: string };
  if (e?.name === 'ConnectionException' || e?.name === 'KnexTimeoutError') return true;
  if (typeof e?.code === 'string' && CONNECTION_ERROR_CODES.has(e.code)) return true;
  // knex reports the rest of a transaction whose connection died as "already complete".
  return (
    typeof e?.message === 'string' &&
    /Timeout acquiring a connection|Connection terminated|Connection ended unexpectedly|encountered a connection error and is not queryable|timeout exceeded when trying to connect|Transaction query already complete/i.test(
      e.message,
    )
  );
}
