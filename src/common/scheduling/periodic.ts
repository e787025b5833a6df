import type { LoggerService } from '@nestjs/common';

/**
 * What a run may tell the loop about the next one: `busy` there is more to do, run again at once;
 * `{ againInMs }` run again after that pause (a step that met a changing state and wants it to
 * settle: no failure, so no backoff). Anything else, `undefined` included, is an idle run: the
 * next one comes after the interval.
 */
export type RunOutcome = 'busy' | 'idle' | { readonly againInMs: number };

export interface PeriodicOptions {
  /** The pause after an idle run; a function when it depends on the state (read after each run). */
  intervalMs: number | (() => number);
  /** One run. Resolves to a RunOutcome (or to anything else: idle); rejects when it failed. */
  run: () => Promise<unknown>;
  /** The first run at start() rather than one interval later. */
  runAtStart?: boolean;
  /**
   * The pause after a failed run: `baseMs`, doubled for each further failure in a row, capped at
   * `maxMs`, with ±20% jitter so processes failing together do not retry together. Default: the
   * interval, not growing.
   */
  backoff?: { baseMs: number; maxMs: number };
  logger: Pick<LoggerService, 'warn' | 'log'>;
  /** What the log says when a run fails. */
  failure: string;
  /** A failure is logged when it is the first in a row, then every `logEvery`-th: an outage must not flood the log. Default 1. */
  logEvery?: number;
  /**
   * A one-line reason to log in place of the error itself (whose message or details may be long,
   * or carry URLs with credentials); absent, the error is logged under `err`.
   */
  reason?: (error: unknown) => string;
  /** Logged when a run succeeds after failures; absent, nothing is. */
  recovered?: string;
}

/** Doublings of the backoff at most: 2^16 times the base is past any sensible cap already. */
const MAX_DOUBLINGS = 16;

/**
 * The one loop of the service's background work (pruning, purging, reconciling, following a
 * chain, fetching metadata, probing replicas). It runs `run` after `intervalMs` (or at start),
 * never two runs at once in this process; a `busy` run is followed by another at once, a failed
 * one by a growing, jittered, capped backoff, logged once and then every `logEvery` failures.
 * `wake()` runs it now (on a notification, or when a slot frees up): a wake during a run asks for
 * one more right after it. `stop()` waits for the run in progress, so shutdown never cuts one in
 * half. Work that must run on one process of a deployment at a time takes a PostgreSQL advisory
 * lock inside its run.
 */
export class Periodic {
  private timer: { cancel(): void } | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private stopped = false;
  /** A wake arrived during a run: run again as soon as it ends. */
  private again = false;
  private failures = 0;

  constructor(private readonly options: PeriodicOptions) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.waitThenRun(this.options.runAtStart ? 0 : this.intervalMs());
  }

  /** Runs now, or right after the run in progress; nothing before start() or after stop(). */
  wake(): void {
    if (!this.started || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.runNow();
  }

  /**
   * Whether the last run failed, so the loop is backing off: a caller that wakes it on every sign
   * of new work (a pushed block) holds back meanwhile, or the backoff would not protect what fails.
   */
  get failing(): boolean {
    return this.failures > 0;
  }

  /** No run starts any more; resolves once the run in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
  }

  private intervalMs(): number {
    const { intervalMs } = this.options;
    return typeof intervalMs === 'function' ? intervalMs() : intervalMs;
  }

  private waitThenRun(ms: number): void {
    if (this.stopped) return;
    this.timer?.cancel();
    if (ms <= 0) {
      // At once, but after what the event loop has waiting (I/O, other timers): a busy loop must not starve them.
      const immediate = setImmediate(() => this.runNow());
      immediate.unref();
      this.timer = { cancel: () => clearImmediate(immediate) };
    } else {
      const timeout = setTimeout(() => this.runNow(), ms);
      timeout.unref();
      this.timer = { cancel: () => clearTimeout(timeout) };
    }
  }

  private runNow(): void {
    this.timer?.cancel();
    this.timer = null;
    if (this.stopped || this.running) return;
    this.again = false;
    this.running = this.runOnce().then((pauseMs) => {
      this.running = null;
      const wanted = this.again;
      this.again = false;
      this.waitThenRun(wanted ? 0 : pauseMs);
    });
  }

  /** One run; resolves (never rejects) to the pause before the next. */
  private async runOnce(): Promise<number> {
    let outcome: unknown;
    try {
      outcome = await this.options.run();
    } catch (error) {
      this.failures += 1;
      const pauseMs = this.backoffMs();
      const every = Math.max(1, this.options.logEvery ?? 1);
      if (this.failures === 1 || this.failures % every === 0) {
        const { reason, failure, logger } = this.options;
        const context = { failures: this.failures, retryInMs: pauseMs };
        if (reason) logger.warn(context, `${failure}: ${reason(error)}`);
        else logger.warn({ ...context, err: error }, failure);
      }
      return pauseMs;
    }
    if (this.failures > 0 && this.options.recovered) {
      this.options.logger.log({ failures: this.failures }, `${this.options.recovered} (after ${this.failures} failed run(s))`);
    }
    this.failures = 0;
    if (outcome === 'busy') return 0;
    if (typeof outcome === 'object' && outcome !== null && typeof (outcome as { againInMs?: unknown }).againInMs === 'number') {
      return (outcome as { againInMs: number }).againInMs;
    }
    return this.intervalMs();
  }

  private backoffMs(): number {
    const base = this.options.backoff?.baseMs ?? this.intervalMs();
    const max = this.options.backoff?.maxMs ?? base;
    const ms = Math.min(max, base * 2 ** Math.min(this.failures - 1, MAX_DOUBLINGS));
    return Math.round(ms * (0.8 + Math.random() * 0.4));
  }
}
