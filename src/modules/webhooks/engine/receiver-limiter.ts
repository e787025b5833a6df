import { LRUCache } from 'lru-cache';

/** Receivers whose typical duration is remembered; the least recently used is forgotten first. */
const TYPICAL_DURATIONS_MAX = 10_000;

/**
 * Bounds how many webhooks one worker has in flight to one receiver. A receiver that is slow or
 * dead can then hold only a few slots; the worker's other slots keep serving everyone else.
 */
export class ReceiverLimiter {
  private readonly inFlight = new Map<string, number>();
  private readonly waiters = new Map<string, ((granted: boolean) => void)[]>();
  /** Smoothed duration of recent sends per receiver: only a receiver known to be fast is waited for. */
  private readonly typicalMs = new LRUCache<string, number>({ max: TYPICAL_DURATIONS_MAX });
  /** Since when each receiver with requests in flight has gone without answering one. */
  private readonly silentSince = new Map<string, number>();

  constructor(
    private readonly perReceiver: number,
    private readonly options: { fastReceiverMs: number; maxWaitMs: number } = { fastReceiverMs: 0, maxWaitMs: 0 },
  ) {}

  tryAcquire(receiver: string): boolean {
    const current = this.inFlight.get(receiver) ?? 0;
    if (current >= this.perReceiver) return false;
    this.inFlight.set(receiver, current + 1);
    if (!this.silentSince.has(receiver)) this.silentSince.set(receiver, Date.now());
    return true;
  }

  /** How many receivers have at least one request in flight. */
  activeCount(): number {
    return this.inFlight.size;
  }

  /** Whether the receiver's recent requests finished fast enough that waiting for one of its slots pays. */
  isFast(receiver: string): boolean {
    const typical = this.typicalMs.get(receiver);
    return this.options.maxWaitMs > 0 && typical !== undefined && typical <= this.options.fastReceiverMs;
  }

  /**
   * A slot now, or the next one freed within maxWaitMs (first come, first served); false when
   * none frees in time. Callers wait only for a receiver that isFast, so a slow or failing
   * receiver can never tie up the worker's other job slots.
   */
  waitForSlot(receiver: string): Promise<boolean> {
    if (this.tryAcquire(receiver)) return Promise.resolve(true);
    if (this.options.maxWaitMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const queue = this.waiters.get(receiver) ?? [];
      const waiter = (granted: boolean) => {
        clearTimeout(timer);
        resolve(granted);
      };
      const timer = setTimeout(() => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        if (queue.length === 0 && this.waiters.get(receiver) === queue) this.waiters.delete(receiver);
        resolve(false);
      }, this.options.maxWaitMs);
      queue.push(waiter);
      this.waiters.set(receiver, queue);
    });
  }

  /** Frees a slot (handing it straight to a waiter, if any); `tookMs` feeds the receiver's typical duration. */
  release(receiver: string, tookMs?: number): void {
    if (tookMs !== undefined) {
      const previous = this.typicalMs.get(receiver);
      this.typicalMs.set(receiver, previous === undefined ? tookMs : previous * 0.8 + tookMs * 0.2);
    }
    this.silentSince.set(receiver, Date.now());
    const queue = this.waiters.get(receiver);
    const next = queue?.shift();
    if (queue && queue.length === 0) this.waiters.delete(receiver);
    if (next) {
      next(true);
      return;
    }
    const current = this.inFlight.get(receiver) ?? 0;
    if (current <= 1) {
      this.inFlight.delete(receiver);
      this.silentSince.delete(receiver);
    } else this.inFlight.set(receiver, current - 1);
  }

  /**
   * How long the receiver is likely to take to free a slot: its smoothed duration of recent sends,
   * or, when longer, how long its requests in flight have gone without an answer (so a receiver
   * holding its first requests counts as slow before any of them returns).
   */
  expectedMs(receiver: string, now = Date.now()): number {
    const since = this.silentSince.get(receiver);
    return Math.max(this.typicalMs.get(receiver) ?? 0, since === undefined ? 0 : now - since);
  }

  count(receiver: string): number {
    return this.inFlight.get(receiver) ?? 0;
  }
}

/** Receivers are told apart by origin: one host and port share one budget. */
export function receiverKey(url: string): string {
  return new URL(url).origin;
}
