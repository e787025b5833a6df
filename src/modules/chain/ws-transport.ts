import { BaseError, RpcRequestError, Transport, webSocket } from 'viem';
import type { SocketRpcClient } from 'viem/utils';
import { withTimeout } from '../../common/async/with-timeout';

/** A node's new head, as much of it as waking a reader needs. */
export type OnNewHead = (blockNumber: number) => void;

/**
 * What a WebSocket node offers beside its calls: a `newHeads` subscription. Resolves once the node
 * accepted it, to the function that ends it; rejects when the node refused it or could not be
 * reached. `onLost` is called once the subscription is gone (connection closed or failed).
 */
export type SubscribeNewHeads = (onHead: OnNewHead, onLost: (error: unknown) => void) => Promise<() => void>;

/** What a WebSocket node's transport adds to a client's `transport`. */
export interface WebSocketNode {
  subscribeNewHeads: SubscribeNewHeads;
  /** Closes the connection for good: later calls fail at once (the process is stopping). */
  close(): void;
}

type Socket = SocketRpcClient<WebSocket>;

/** ws's readyState past OPEN: CLOSING (2) or CLOSED (3). */
const isClosed = (client: Socket) => client.socket.readyState >= 2;

/**
 * Whether a failed call was answered by the node (a JSON-RPC error): the connection is sound. Any
 * other failure (no answer in time, the socket closed or in error) leaves it in doubt.
 */
function answeredByNode(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof RpcRequestError) !== null;
}

/**
 * The connection of one transport: opened on the first call, one attempt at a time, within the
 * call timeout (viem's own connect waits for the handshake without bound, and a node that accepts
 * TCP but never answers, frozen or overloaded, would hang the follower's step for good).
 */
class Connection {
  private opening: Promise<Socket> | null = null;
  private current: Socket | null = null;
  private closed = false;

  constructor(
    private readonly connect: () => Promise<Socket>,
    private readonly timeoutMs: number,
    /** The node, safe to print. */
    private readonly label: string,
  ) {}

  /** The open connection, or a new one in place of a closed one. */
  async open(): Promise<Socket> {
    if (this.closed) throw new Error(`the connection to ${this.label} is closed`);
    if (this.current && !isClosed(this.current)) return this.current;
    this.drop();
    this.opening ??= this.connect()
      .catch((error: unknown) => {
        // ws rejects with its error event, not an Error: keep the reason ("connect ECONNREFUSED …").
        const reason = (error as { message?: unknown } | null)?.message;
        throw new Error(`could not connect to ${this.label}${typeof reason === 'string' && reason ? `: ${reason}` : ''}`);
      })
      .finally(() => (this.opening = null));
    const client = await withTimeout(this.opening, this.timeoutMs, `could not connect to ${this.label} in ${this.timeoutMs} ms`);
    if (this.closed) {
      client.close();
      throw new Error(`the connection to ${this.label} is closed`);
    }
    this.current = client;
    return client;
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  /** Closes the connection (viem then forgets it), so that the next call opens a new one. */
  drop(): void {
    const client = this.current;
    this.current = null;
    client?.close();
  }
}

/**
 * A node over WebSocket: one connection per URL, shared by the chain's calls and its new-heads
 * subscription, and opened again when lost. viem's own reconnection is off: it gives up after one
 * failed attempt and keeps the dead connection cached, so every later call on it would fail until
 * the process restarts. Here a connection found closed, or one a call failed on without the
 * node's answer (a timeout, a socket error), is closed, and the next call opens a new one; when
 * calls are made is the follower's business (its backoff), not the transport's.
 */
export function webSocketNode(url: string, timeoutMs: number, label: string): Transport {
  const base = webSocket(url, { timeout: timeoutMs, retryCount: 0, reconnect: false });
  return (parameters) => {
    const inner = base(parameters);
    const value = inner.value!;
    const connection = new Connection(() => value.getRpcClient(), timeoutMs, label);

    const request: typeof inner.request = async (args, options) => {
      await connection.open();
      try {
        return await inner.request(args, options);
      } catch (error) {
        if (!answeredByNode(error)) connection.drop();
        throw error;
      }
    };

    const subscribeNewHeads: SubscribeNewHeads = async (onHead, onLost) => {
      await connection.open();
      // Lost before it was accepted, the subscription fails (its promise rejects); once accepted, onLost says so.
      let state: 'asked' | 'live' | 'over' = 'asked';
      let lostEarly: unknown = null;
      const subscribing = value
        .subscribe({
          params: ['newHeads'],
          onData: (data) => {
            const blockNumber = Number((data as { result?: { number?: string } }).result?.number);
            if (state !== 'over' && Number.isSafeInteger(blockNumber)) onHead(blockNumber);
          },
          onError: (error: unknown) => {
            if (state === 'over') return;
            if (state === 'asked') lostEarly ??= error;
            else onLost(error);
            state = 'over';
          },
        })
        .catch((error: unknown) => {
          throw refusal(error) ?? error;
        });
      let subscription: Awaited<typeof subscribing>;
      try {
        subscription = await withTimeout(subscribing, timeoutMs, `the node did not answer eth_subscribe in ${timeoutMs} ms`);
        if (lostEarly !== null) throw asError(lostEarly);
      } catch (error) {
        state = 'over';
        // A refusal is an answer; anything else leaves the connection in doubt.
        if (!(error instanceof SubscriptionRefused)) connection.drop();
        throw error;
      }
      state = 'live';
      return () => {
        state = 'over';
        // Best effort: on a closed connection there is nothing left to end.
        subscription.unsubscribe().catch(() => undefined);
      };
    };

    const node: WebSocketNode = { subscribeNewHeads, close: () => connection.close() };
    return { ...inner, request, value: { ...value, ...node } };
  };
}

/** ws reports a socket's failure with its error event, which is no Error. */
function asError(error: unknown): Error {
  if (error instanceof Error) return error;
  const message = (error as { message?: unknown } | null)?.message;
  return new Error(typeof message === 'string' && message ? message : 'the connection failed');
}

/** The node answered eth_subscribe with an error: it does not push heads (over this connection at least). */
export class SubscriptionRefused extends Error {}

/** An error answer to eth_subscribe arrives as the node's plain `{code, message}`, not as a viem error. */
function refusal(error: unknown): SubscriptionRefused | null {
  if (error instanceof Error || typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'number') return null;
  return new SubscriptionRefused(`eth_subscribe refused: ${typeof message === 'string' ? message.slice(0, 200) : 'no reason'} (${code})`);
}
