import type { Params } from 'nestjs-pino';
import { stdSerializers } from 'pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppConfig } from './config/app-config';

/** Paths whose values must never reach a log line, whatever module logs them. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.sharedSecret',
  '*.key',
  '*.apiKey',
  'sharedSecret',
];

/** Query parameters whose values are credentials when a client puts them in the URL by mistake. */
const SECRET_QUERY_PARAMETER = /^(api[-_]?key|key|token|access[-_]?token|secret|shared[-_]?secret|password|authorization)$/i;

/** A value shaped like an API key: the marker and 43 characters of base64url, anywhere in a string. */
const API_KEY_SHAPED = /nftw_[A-Za-z0-9_-]{43}/;

const decodeOrKeep = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    // an undecodable part is judged as sent
    return text;
  }
};

/**
 * The request URL as logged. The service never reads credentials from the URL, but a client that
 * sends one there must not have it written to the logs: values of credential-like query
 * parameters, and any query parameter (name or value) or path segment holding something shaped
 * like an API key or equal to the operator key, whatever the parameter is called.
 */
export function redactUrl(url: string, operatorKey: string | null = null): string {
  const holdsSecret = (part: string) => {
    const decoded = decodeOrKeep(part);
    return API_KEY_SHAPED.test(decoded) || (operatorKey !== null && decoded.includes(operatorKey));
  };
  const queryAt = url.indexOf('?');
  const path = (queryAt < 0 ? url : url.slice(0, queryAt))
    .split('/')
    .map((segment) => (holdsSecret(segment) ? '[redacted]' : segment))
    .join('/');
  if (queryAt < 0) return path;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      const value = equals < 0 ? '' : pair.slice(equals + 1);
      if (holdsSecret(name)) return '[redacted]';
      const decodedName = decodeOrKeep(name);
      return SECRET_QUERY_PARAMETER.test(decodedName.replace(/\[.*$/, '')) || holdsSecret(value) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/**
 * Whether log lines are written for people (pino-pretty) rather than as JSON: when asked with
 * LOG_FORMAT=pretty, or by default in development on a terminal. Never when the lines go to a
 * given destination (tests read JSON), and never without pino-pretty installed (a development
 * dependency), so production output stays JSON.
 */
export function prettyLogs(
  config: Pick<AppConfig, 'logFormat' | 'nodeEnv'>,
  env: { isTty: boolean; hasPretty: boolean },
  destination?: NodeJS.WritableStream,
): boolean {
  if (destination || !env.hasPretty || config.logFormat === 'json') return false;
  return config.logFormat === 'pretty' || (config.nodeEnv === 'development' && env.isTty);
}

/** Where pino-pretty is installed (a transport target must be a path pino's worker can load), or null. */
function pinoPrettyPath(): string | null {
  try {
    return require.resolve('pino-pretty');
  } catch {
    return null;
  }
}

export function loggerParams(config: AppConfig, destination?: NodeJS.WritableStream): Params {
  const prettyPath = pinoPrettyPath();
  const pretty = prettyLogs(config, { isTty: process.stdout.isTTY === true, hasPretty: prettyPath !== null }, destination);
  return {
    pinoHttp: [
      {
        level: config.logLevel,
        genReqId: (req: IncomingMessage) => (req as IncomingMessage & { id?: string }).id ?? 'unknown',
        redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
        // Liveness probes and metric scrapes would drown everything else.
        autoLogging: { ignore: (req: IncomingMessage) => /^\/(health\/|metrics)/.test(req.url ?? '') },
        customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
          err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
        // Our serializers read the raw request and response themselves. pino-http would otherwise
        // first copy every header into a plain object on each request, only for us to keep three
        // fields; the logged fields are the same either way.
        wrapSerializers: false,
        serializers: {
          req: (req: { id: string; method: string; originalUrl?: string; url: string }) => ({
            id: req.id,
            method: req.method,
            url: redactUrl(req.originalUrl || req.url, config.operatorApiKey),
          }),
          res: (res: { statusCode: number; headersSent?: boolean }) => ({
            statusCode: res.headersSent === false ? null : res.statusCode,
          }),
          err: stdSerializers.err,
        },
        ...(pretty
          ? { transport: { target: prettyPath as string, options: { colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l' } } }
          : {}),
      },
      ...(destination ? [destination as never] : []),
    ] as never,
  };
}
