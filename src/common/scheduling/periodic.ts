import type { LoggerService } from '@nestjs/common';

/**
 * The one way maintenance runs on a schedule (pruning, purging, secret cleanup, reconciling):
 * `run` every `intervalMs`, never two at once in this process (a run still going skips the
 * tick), a failure logged and retried at the next tick, and `stop` waits for the run in progress
 * so shutdown never cuts one in half. Work that must run on one process of a deployment at a time
 * wraps itself in withAdvisoryLock.
 */
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly options: {
      intervalMs: number;
      run: () => Promise<unknown>;
      logger: Pick<LoggerService, 'warn'>;
      /** What the log says when a run fails. */
      failure: string;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  private tick(): void {
    if (this.running) return;
    this.running = Promise.resolve()
      .then(this.options.run)
      .then(
        () => undefined,
        (error: unknown) => {
          this.options.logger.warn({ err: error }, this.options.failure);
        },
      )
      .finally(() => (this.running = null));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
