import { Agent } from 'undici';
import { checkWebhookUrl, createGuardedLookup, PortRange } from '../../../common/net/url-policy';
import { deadlineSignal } from '../../../common/async/deadline-signal';
import { classifyFetchFailure } from '../../../common/net/fetch-failure';
import { isSuccessStatus } from './webhook.rules';

export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'blocked';

export interface SendResult {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The start of what the receiver answered (see responseBodyText); null when no answer came. */
  responseBody: string | null;
  /** The receiver's Retry-After header as sent, when it answered one. */
  retryAfter?: string | null;
}

/** How much of a receiver's answer the delivery log keeps. */
export const RESPONSE_BODY_BYTES = 1024;
/** How much of an answer is read at most so its connection can go back to the pool; past it the connection is dropped. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

export interface SenderOptions {
  timeoutMs: number;
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
  allowedPorts?: readonly PortRange[];
}

/** How far past the timeout undici's own timers sit; well inside an attempt's lease (attemptLeaseMs). */
const BACKSTOP_MS = 2000;

/**
 * Sends webhook POSTs over pooled keep-alive connections. The URL policy of the webhook
 * configuration is applied again here, to the address actually connected to, so a hostname that
 * later resolves to a private address (DNS rebinding) is still refused.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    const policy = { allowPrivateNetworks: options.allowPrivateNetworks };
    // No per-origin connection cap: concurrency is bounded per endpoint by the caller, and a cap
    // per origin would let a dead endpoint's hanging requests hold up a healthy endpoint on the
    // same host.
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      // Backstops only: the attempt's deadline signal decides, after reading what arrived in time
      // (see deadlineSignal); undici's own timers would fire first in a stalled process.
      headersTimeout: options.timeoutMs + BACKSTOP_MS,
      bodyTimeout: options.timeoutMs + BACKSTOP_MS,
      connectTimeout: options.timeoutMs + BACKSTOP_MS,
      connect: { lookup: createGuardedLookup(policy) },
    });
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const policyError = checkWebhookUrl(url, this.options);
    if (policyError) return { outcome: 'blocked', status: null, error: policyError, durationMs: 0, responseBody: null };
    // Literal IPs never reach the guarded lookup; checkWebhookUrl has judged them above.
    const target = new URL(url);
    try {
      const res = await this.agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers,
        body,
        signal: deadlineSignal(this.options.timeoutMs),
      });
      const durationMs = elapsed();
      const start = await readStart(res.body, RESPONSE_BODY_BYTES, DRAIN_LIMIT_BYTES);
      const responseBody = responseBodyText(start.bytes, start.cut);
      const retryAfter = headerValue(res.headers['retry-after']);
      return isSuccessStatus(res.statusCode)
        ? { outcome: 'success', status: res.statusCode, error: null, durationMs, responseBody, retryAfter }
        : {
            outcome: 'http_error',
            status: res.statusCode,
            error: `receiver answered ${res.statusCode}`,
            durationMs,
            responseBody,
            retryAfter,
          };
    } catch (error) {
      return { ...describeFailure(error, this.options.timeoutMs), status: null, durationMs: elapsed(), responseBody: null };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * The first `keep` bytes of an answer's body. The rest is read and thrown away up to `drainLimit`
 * so the connection returns to the pool; a longer answer is cut off (its connection is dropped).
 * An answer that breaks off or runs past the deadline keeps what arrived: the status decided the
 * attempt, the body is only shown in the log.
 */
async function readStart(body: AsyncIterable<Buffer>, keep: number, drainLimit: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  try {
    for await (const chunk of body) {
      if (keptBytes < keep) {
        const part = chunk.subarray(0, keep - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      readBytes += chunk.length;
      if (readBytes > drainLimit) break; // leaving the loop destroys the stream and its connection
    }
  } catch {
    // Keep what arrived.
  }
  return { bytes: Buffer.concat(kept, keptBytes), cut: readBytes > keptBytes };
}

/**
 * An answer's first bytes as text for the delivery log: UTF-8 with invalid sequences replaced
 * (U+FFFD), and NUL replaced too, since PostgreSQL text cannot hold it. When the bytes were `cut`
 * from a longer answer, a character split by the cut is left out rather than shown as invalid.
 */
export function responseBodyText(bytes: Uint8Array, cut = false): string {
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes, { stream: cut });
  return text.replace(/\0/g, '\uFFFD');
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

function describeFailure(error: unknown, timeoutMs: number): { outcome: AttemptOutcome; error: string } {
  const failure = classifyFetchFailure(error, timeoutMs);
  const outcome: AttemptOutcome = failure.kind === 'blocked' ? 'blocked' : failure.kind === 'timeout' ? 'timeout' : 'network_error';
  return { outcome, error: failure.message.slice(0, 500) };
}
