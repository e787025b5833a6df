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
}

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
    if (policyError) return { outcome: 'blocked', status: null, error: policyError, durationMs: 0 };
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
      // Drain (bounded) so the connection returns to the pool; the content is not part of the delivery's outcome.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return isSuccessStatus(res.statusCode)
        ? { outcome: 'success', status: res.statusCode, error: null, durationMs }
        : { outcome: 'http_error', status: res.statusCode, error: `receiver answered ${res.statusCode}`, durationMs };
    } catch (error) {
      return { ...describeFailure(error, this.options.timeoutMs), status: null, durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function describeFailure(error: unknown, timeoutMs: number): { outcome: AttemptOutcome; error: string } {
  const failure = classifyFetchFailure(error, timeoutMs);
  const outcome: AttemptOutcome = failure.kind === 'blocked' ? 'blocked' : failure.kind === 'timeout' ? 'timeout' : 'network_error';
  return { outcome, error: failure.message.slice(0, 500) };
}
