import { LRUCache } from 'lru-cache';

/** Keys whose typical duration is remembered; the least recently used is forgotten first. */
const TYPICAL_DURATIONS_MAX = 10_000;

/**
 * Bounds how many attempts one worker has in flight per key: the executor keeps one keyed by
 * endpoint and one keyed by organization. An endpoint that is slow or dead (or an organization
 * whose endpoints are) can then hold only a few slots; the worker's other slots keep serving
 * everyone else. It also learns how long each key's attempts take, so that only a fast one is
 * waited for.
 */
export class InFlightLimiter {
  private readonly inFlight = new Map<string, number>();
  private readonly waiters = new Map<string, ((granted: boolean) => void)[]>();
  /** Smoothed duration of recent sends per key: only a key known to be fast is waited for. */
  private readonly typicalMs = new LRUCache<string, number>({ max: TYPICAL_DURATIONS_MAX });
  /** Since when each key with requests in flight has gone without an answer to one. */
  private readonly silentSince = new Map<string, number>();

  /**
   * `ownDelayMs`, when given, says how late this process has lately been in reading what it awaits
   * (its event-loop delay): it is taken off each duration learned, so a receiver is not judged
   * slow for the time its answers waited on this process.
   */
  constructor(
    private readonly perKey: number,
    private readonly options: { fastMs: number; maxWaitMs: number; ownDelayMs?: () => number } = { fastMs: 0, maxWaitMs: 0 },
  ) {}

  /** A slot now, if the key has fewer than `limit` in flight (the limiter's own by default; an endpoint's adapts). */
  tryAcquire(key: string, limit = this.perKey): boolean {
    const current = this.inFlight.get(key) ?? 0;
    if (current >= limit) return false;
    this.inFlight.set(key, current + 1);
    if (!this.silentSince.has(key)) this.silentSince.set(key, Date.now());
    return true;
  }

  /** How many keys have at least one request in flight. */
  activeCount(): number {
    return this.inFlight.size;
  }

  /** Whether the key's recent requests finished fast enough that waiting for one of its slots pays. */
  isFast(key: string): boolean {
    const typical = this.typicalMs.get(key);
    return this.options.maxWaitMs > 0 && typical !== undefined && typical <= this.options.fastMs;
  }

  /**
   * A slot now, or the next one freed within maxWaitMs (first come, first served); false when
   * none frees in time. Callers wait only for a key that isFast, so a slow or failing
   * endpoint can never tie up the worker's other job slots.
   */
  waitForSlot(key: string, limit = this.perKey): Promise<boolean> {
    if (this.tryAcquire(key, limit)) return Promise.resolve(true);
    if (this.options.maxWaitMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const queue = this.waiters.get(key) ?? [];
      const waiter = (granted: boolean) => {
        clearTimeout(timer);
        resolve(granted);
      };
      const timer = setTimeout(() => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        if (queue.length === 0 && this.waiters.get(key) === queue) this.waiters.delete(key);
        resolve(false);
      }, this.options.maxWaitMs);
      queue.push(waiter);
      this.waiters.set(key, queue);
    });
  }

  /**
   * Frees a slot, handing it straight to a waiter if any while the key is within `limit` (an
   * endpoint's may have shrunk since the waiter came: it then waits for a later slot); `tookMs`
   * (less this process's own delay) feeds the key's typical duration.
   */
  release(key: string, tookMs?: number, limit = this.perKey): void {
    if (tookMs !== undefined) {
      const theirs = Math.max(0, tookMs - (this.options.ownDelayMs?.() ?? 0));
      const previous = this.typicalMs.get(key);
      this.typicalMs.set(key, previous === undefined ? theirs : previous * 0.8 + theirs * 0.2);
    }
    this.silentSince.set(key, Date.now());
    const current = this.inFlight.get(key) ?? 0;
    const queue = current <= limit ? this.waiters.get(key) : undefined;
    const next = queue?.shift();
    if (queue && queue.length === 0) this.waiters.delete(key);
    if (next) {
      next(true);
      return;
    }
    if (current <= 1) {
      this.inFlight.delete(key);
      this.silentSince.delete(key);
    } else this.inFlight.set(key, current - 1);
  }

  /**
   * How long the key is likely to take to free a slot: its smoothed duration of recent sends,
   * or, when longer, how long its requests in flight have gone without an answer (so an endpoint
   * holding its first requests counts as slow before any of them returns).
   */
  expectedMs(key: string, now = Date.now()): number {
    const since = this.silentSince.get(key);
    return Math.max(this.typicalMs.get(key) ?? 0, since === undefined ? 0 : now - since);
  }

  count(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }
}
