import { Injectable, Logger, LoggerService, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { ChainClients, shortReason } from './chain-clients';
import { chainNewHeadsLost, chainNewHeadsPushed, chainNewHeadsSubscribed } from './chain-metrics';
import { afterPoll, afterPush, NOTHING_PUSHED, PushWatch, pushesStopped, resubscribeDelayMs } from './new-heads.rules';
import { OnNewHead, SubscribeNewHeads } from './ws-transport';

/** A subscription whose pushes the polls have outrun this long is subscribed again (see pushesStopped). */
export const PUSHES_STALE_MS = 30_000;
/** A lost or refused subscription is logged the first time in a row, then every this many times. */
const LOG_EVERY = 20;

/**
 * One chain's `newHeads` subscription, kept up: subscribed at the first listener, subscribed again
 * with a growing, jittered backoff whenever it is refused, lost with its connection, or found to
 * have stopped pushing. Every head pushed goes to the listeners, which only wake their loops;
 * those loops' own polls go on whatever happens here.
 */
export class NewHeadsSubscription {
  private readonly listeners = new Set<OnNewHead>();
  private readonly label: { chainId: string };
  /** Counts subscriptions; anything an older one still delivers is ignored. */
  private generation = 0;
  private end: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private watch: PushWatch = NOTHING_PUSHED;
  private started = false;
  private stopped = false;
  private everSubscribed = false;

  constructor(
    private readonly subscribe: SubscribeNewHeads,
    chainId: number,
    /** Named in the log: what takes over while heads are not pushed. */
    private readonly pollIntervalMs: number,
    private readonly logger: Pick<LoggerService, 'log' | 'warn'>,
  ) {
    this.label = { chainId: String(chainId) };
  }

  /** Calls `onHead` with every head pushed from now on; returns the function that stops it. */
  listen(onHead: OnNewHead): () => void {
    this.listeners.add(onHead);
    if (!this.started) {
      this.started = true;
      void this.connect();
    }
    return () => this.listeners.delete(onHead);
  }

  /** Whether heads are being pushed right now. */
  get subscribed(): boolean {
    return this.end !== null;
  }

  /**
   * A reader of the chain read the node's head itself: a subscription that has pushed none of
   * the heads the polls keep finding, for PUSHES_STALE_MS, is subscribed again.
   */
  polled(head: number, nowMs = Date.now()): void {
    if (this.end === null) return;
    this.watch = afterPoll(this.watch, head, nowMs);
    if (pushesStopped(this.watch, nowMs, PUSHES_STALE_MS)) {
      this.lost(
        this.generation,
        new Error(`no head pushed for ${PUSHES_STALE_MS / 1000} s while the polls found the chain at block ${head}`),
      );
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.end?.();
    this.end = null;
    chainNewHeadsSubscribed.set(this.label, 0);
  }

  private async connect(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    const generation = ++this.generation;
    let end: () => void;
    try {
      end = await this.subscribe(
        (head) => this.pushed(generation, head),
        (error) => this.lost(generation, error),
      );
    } catch (error) {
      this.lost(generation, error);
      return;
    }
    if (this.stopped || generation !== this.generation) {
      end();
      return;
    }
    this.end = end;
    this.watch = NOTHING_PUSHED;
    chainNewHeadsSubscribed.set(this.label, 1);
    if (!this.everSubscribed || this.failures > 0) {
      this.logger.log(`the node pushes new heads; the poll every ${this.pollIntervalMs} ms stays as a fallback`);
    }
    this.everSubscribed = true;
  }

  private pushed(generation: number, head: number): void {
    if (this.stopped || generation !== this.generation) return;
    // The backoff starts over only once heads arrive: a node that accepts the subscription and
    // drops it at once must not be asked again at once, over and over.
    this.failures = 0;
    this.watch = afterPush(this.watch, head);
    chainNewHeadsPushed.inc(this.label);
    for (const listener of this.listeners) listener(head);
  }

  private lost(generation: number, error: unknown): void {
    if (this.stopped || generation !== this.generation) return;
    this.generation += 1;
    this.end?.();
    this.end = null;
    chainNewHeadsSubscribed.set(this.label, 0);
    chainNewHeadsLost.inc(this.label);
    this.failures += 1;
    const delayMs = resubscribeDelayMs(this.failures);
    if (this.failures === 1 || this.failures % LOG_EVERY === 0) {
      this.logger.warn(
        { failures: this.failures, retryInMs: delayMs },
        `new heads are not pushed (${shortReason(error)}); polling every ${this.pollIntervalMs} ms meanwhile, subscribing again`,
      );
    }
    this.timer = setTimeout(() => void this.connect(), delayMs);
    this.timer.unref();
  }
}

/**
 * The `newHeads` subscriptions of this process, one per chain whose node is reached over ws(s),
 * opened when a reader of the chain first listens (so only processes that follow chains hold
 * one). Over http(s) there is nothing to listen to: the readers poll.
 */
@Injectable()
export class ChainHeads implements OnModuleDestroy {
  private readonly subscriptions = new Map<number, NewHeadsSubscription>();

  constructor(
    private readonly clients: ChainClients,
    private readonly config: AppConfig,
  ) {}

  /** Calls `onHead` with every head the chain's node pushes; returns the function that stops it. */
  listen(chainId: number, onHead: OnNewHead): () => void {
    return this.subscriptionOf(chainId)?.listen(onHead) ?? (() => undefined);
  }

  /** A reader read the chain's head itself (see NewHeadsSubscription.polled). */
  polled(chainId: number, head: number): void {
    this.subscriptions.get(chainId)?.polled(head);
  }

  /** Before the clients close their connections (onApplicationShutdown): a subscription lost then is not taken up again. */
  onModuleDestroy(): void {
    for (const subscription of this.subscriptions.values()) subscription.stop();
  }

  private subscriptionOf(chainId: number): NewHeadsSubscription | null {
    const existing = this.subscriptions.get(chainId);
    if (existing) return existing;
    const subscribe = this.clients.newHeads(chainId);
    if (!subscribe) return null;
    const subscription = new NewHeadsSubscription(
      subscribe,
      chainId,
      this.config.chain.pollIntervalMs,
      new Logger(`ChainHeads ${chainId}`),
    );
    this.subscriptions.set(chainId, subscription);
    return subscription;
  }
}
