import { WebhookHostError } from './url-policy';

/** Why an outgoing request through undici failed, in the words a log or an integrator reads. */
export type FetchFailure =
  { kind: 'blocked'; message: string } | { kind: 'timeout'; message: string } | { kind: 'network'; message: string };

/**
 * Sorts an error thrown by an outgoing request (webhook attempts, token metadata): refused by the
 * URL policy at connect time (WebhookHostError, possibly as the cause), out of time (our abort
 * signal or one of undici's own timeouts), or anything else on the way.
 */
export function classifyFetchFailure(error: unknown, timeoutMs: number): FetchFailure {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e instanceof WebhookHostError || e.cause instanceof WebhookHostError) {
    return { kind: 'blocked', message: (e.cause as Error | undefined)?.message ?? e.message ?? 'blocked address' };
  }
  const code = e.code ?? e.cause?.code;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return { kind: 'timeout', message: `no answer within ${timeoutMs} ms` };
  }
  return { kind: 'network', message: `${code ?? e.name ?? 'error'}: ${e.message ?? 'connection failed'}` };
}
