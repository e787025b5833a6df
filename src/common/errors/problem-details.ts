import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';
import type { FieldError } from './domain-error';
import type { CoreErrorCode } from './error-catalogue';

/** RFC 9457 problem details, the body of every error answer. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string | null;
  errors?: FieldError[];
}

export function problemType(code: string): string {
  return `/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

export function buildProblem(
  status: number,
  code: string,
  detail: string,
  requestId: string | null,
  errors?: FieldError[],
): ProblemDetails {
  const problem: ProblemDetails = {
    type: problemType(code),
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    code,
    requestId,
  };
  if (errors && errors.length > 0) problem.errors = errors;
  return problem;
}

export function sendProblem(res: Response, problem: ProblemDetails, headers?: Record<string, string>): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

/** Generic codes (catalogue keys) for HTTP errors raised by the framework rather than by our services. */
export const STATUS_CODE_NAMES: Record<number, CoreErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};
