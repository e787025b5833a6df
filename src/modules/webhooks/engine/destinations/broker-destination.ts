import { checkDestinationHost } from '../../../../common/net/destination-policy';
import { WebhookHostError } from '../../../../common/net/url-policy';
import { destinationHostPort } from '../../../webhook-endpoints/destination.rules';
import type { SendResult } from '../webhook-sender';
import type { BrokerEndpoint, BrokerOptions, Destination, OutboundMessage, SendDeadline } from './destination';

/** How much of a broker's answer or error the delivery log keeps. */
const MAX_TEXT = 1024;

/** The broker answered, and its answer is a refusal (a nack, an unroutable message, a reason code): a failed attempt. */
export class BrokerRefusal extends Error {
  constructor(
    message: string,
    /** The broker's answer as the delivery log shows it. */
    readonly answer: string | null = null,
  ) {
    super(message);
    this.name = 'BrokerRefusal';
  }
}

class AttemptTimedOut extends Error {}

/**
 * What every broker destination shares: one connection per endpoint and process, opened on the
 * first attempt (after the address policy has judged the resolved host), reused by every attempt
 * after, and dropped when it fails so the next attempt opens a new one. An attempt waits at most
 * WEBHOOK_TIMEOUT_MS for the connection and the broker's answer together. Error texts never
 * carry the url's credentials.
 */
export abstract class BrokerDestination<Connection> implements Destination {
  private connection: Promise<Connection> | null = null;
  private closed = false;
  /** Texts that must never reach the delivery log or a log line. */
  private readonly secrets: string[];

  constructor(
    protected readonly endpoint: BrokerEndpoint,
    protected readonly options: BrokerOptions,
  ) {
    const url = new URL(endpoint.destination.connectUrl);
    this.secrets = [endpoint.destination.connectUrl, url.password, safeDecode(url.password)].filter((s) => s.length > 0);
  }

  /** Opens a connection; calls `lost` once when it ends, however it ends. */
  protected abstract connect(lost: () => void): Promise<Connection>;
  /** Publishes and waits for the broker's answer; returns it as the delivery log shows it, throws BrokerRefusal for a refusal. */
  protected abstract publish(connection: Connection, message: OutboundMessage, timeoutMs: number): Promise<string>;
  protected abstract disconnect(connection: Connection): Promise<void>;

  async send(message: OutboundMessage, deadline: SendDeadline): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const timeoutMs = deadline.timeoutMs;
    try {
      const connection = await beforeDeadline(this.connected(), timeoutMs);
      const answer = await beforeDeadline(this.publish(connection, message, Math.max(1, timeoutMs - elapsed())), timeoutMs - elapsed());
      return { outcome: 'success', status: null, error: null, durationMs: elapsed(), responseBody: this.clean(answer) };
    } catch (error) {
      return { ...this.describe(error), status: null, durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = this.connection;
    this.connection = null;
    const connection = await pending?.catch(() => null);
    if (connection) await this.disconnect(connection).catch(() => undefined);
  }

  /** The open connection, or one being opened; a failed opening is forgotten so the next attempt tries again. */
  private connected(): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('the destination was changed or deleted'));
    if (this.connection === null) {
      const forget = () => {
        if (this.connection === opening) this.connection = null;
      };
      const opening: Promise<Connection> = this.open(forget);
      this.connection = opening;
      opening.catch(forget);
    }
    return this.connection;
  }

  private async open(lost: () => void): Promise<Connection> {
    const { hostname, hostPort } = destinationHostPort(this.endpoint.destination.settings.url);
    await checkDestinationHost(hostname, hostPort, this.options.policy);
    const connection = await this.connect(lost);
    // Closed while it was being opened: nobody will use it.
    if (this.closed) await this.disconnect(connection).catch(() => undefined);
    return connection;
  }

  /** Drops the connection after an attempt it could not answer in time, so the next attempt opens a new one. */
  private dropStalled(): void {
    const stalled = this.connection;
    this.connection = null;
    void stalled?.then((connection) => this.disconnect(connection)).catch(() => undefined);
  }

  private describe(error: unknown): Pick<SendResult, 'outcome' | 'error' | 'responseBody'> {
    if (error instanceof BrokerRefusal) {
      return {
        outcome: 'broker_error',
        error: this.clean(error.message),
        responseBody: error.answer === null ? null : this.clean(error.answer),
      };
    }
    if (error instanceof WebhookHostError) return { outcome: 'blocked', error: `destination.url ${error.message}`, responseBody: null };
    if (error instanceof AttemptTimedOut) {
      this.dropStalled();
      return { outcome: 'timeout', error: `the broker did not answer within ${this.options.timeoutMs} ms`, responseBody: null };
    }
    return { outcome: 'network_error', error: this.clean(`broker connection failed: ${messageOf(error)}`), responseBody: null };
  }

  /** A text for the delivery log: every credential replaced by `***`, at most 1,024 characters. */
  protected clean(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('***');
    return out.slice(0, MAX_TEXT);
  }
}

function beforeDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  if (ms <= 0) return Promise.reject(new AttemptTimedOut());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new AttemptTimedOut()), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}

function messageOf(error: unknown): string {
  const e = error as { message?: string; code?: string | number };
  const text = e?.message ?? String(error);
  return e?.code !== undefined && !text.includes(String(e.code)) ? `${text} (${e.code})` : text;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
