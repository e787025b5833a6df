import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** How long a wait for something the service does gives it by default (see TestReceiver.waitFor). */
export const WAIT_MS = 30_000;

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The exact bytes received, for signature checks. */
  raw: Buffer;
  body: Record<string, unknown>;
  receivedAt: number;
  /** The request path, so one server can stand in for several endpoints on one host. */
  path: string;
}

/**
 * What the receiver does with the n-th request (1-based): answer a status after a delay, never
 * answer ('hang'), close the connection ('destroy'), or answer bytes that are not HTTP ('garbage').
 */
export type Behaviour = (
  n: number,
  webhook: ReceivedWebhook,
) => { status: number; delayMs?: number; body?: string | Buffer; headers?: Record<string, string> } | 'hang' | 'destroy' | 'garbage';

/** A real HTTP server on loopback standing in for an integrator's webhook endpoint. */
export class TestReceiver {
  readonly received: ReceivedWebhook[] = [];
  behaviour: Behaviour = () => ({ status: 200 });
  private server: Server | null = null;
  private readonly hanging = new Set<ServerResponse>();

  get url(): string {
    return this.urlFor('/webhooks');
  }

  /** A url on this receiver with another path (another endpoint on the same host). */
  urlFor(path: string): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          body = {};
        }
        const webhook = { headers: req.headers, raw, body, receivedAt: Date.now(), path: req.url ?? '/' };
        this.received.push(webhook);
        const action = this.behaviour(this.received.length, webhook);
        if (action === 'hang') {
          this.hanging.add(res);
          return;
        }
        if (action === 'destroy') {
          req.socket.destroy();
          return;
        }
        if (action === 'garbage') {
          req.socket.end('\u0016\u0003\u0001 this is not HTTP at all\r\n\r\n');
          return;
        }
        const answer = () => res.writeHead(action.status, { 'content-type': 'text/plain', ...action.headers }).end(action.body ?? 'ok');
        if (action.delayMs) setTimeout(answer, action.delayMs);
        else answer();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  byId(id: string): ReceivedWebhook[] {
    return this.received.filter((w) => w.body.id === id);
  }

  /**
   * Resolves once `predicate` holds, polling; rejects with what was received after `timeoutMs`.
   * The default leaves room for a machine whose two cores run other work too: chain suites missed
   * 15 s at a load average of 7, and a wait that holds costs nothing more for being longer.
   */
  async waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs = WAIT_MS): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline) {
        throw new Error(
          `receiver condition not met in ${timeoutMs} ms; received ${this.received.length}: ${JSON.stringify(this.received.map((w) => w.body))}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.received;
  }
}

export async function waitUntil<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
