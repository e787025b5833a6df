import { IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * How late this process's event loop has lately been running what was due: the mean delay of a
 * timer sampled every `resolutionMs` (node's own event-loop delay histogram) over the last
 * completed window of `windowMs`, less the sampling interval itself. A duration this process
 * measures around an awaited I/O includes that delay: under a burst, a reply that came back in
 * 2 ms is only read 80 ms later. What the process learns about others from its timings (how fast
 * a receiver answers) subtracts it, so that its own load is not taken for theirs.
 */
export class EventLoopLag {
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  private lastMs = 0;

  constructor(
    private readonly resolutionMs = 10,
    windowMs = 1000,
  ) {
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this.histogram.enable();
    this.timer = setInterval(() => this.roll(), windowMs);
    this.timer.unref();
  }

  /** The loop's mean delay over the last completed window, in milliseconds (0 when it kept up). */
  recentMs(): number {
    return this.lastMs;
  }

  /** Closes the current window now (its mean becomes recentMs) and starts the next. */
  roll(): void {
    // An empty window (no sample yet) reads NaN: nothing learned, keep the last figure.
    const mean = this.histogram.mean;
    if (this.histogram.count > 0 && Number.isFinite(mean)) this.lastMs = Math.max(0, mean / 1e6 - this.resolutionMs);
    this.histogram.reset();
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
