import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Periodic } from './periodic';

export interface MaintenanceJobOptions {
  /** The job's name in the log. */
  name: string;
  intervalMs: number;
  /** Whether this process runs the job (e.g. `runsWorker(config)`): other roles never start it. */
  runsHere: boolean;
  /** What the log says when a pass fails. */
  failure: string;
}

/**
 * Background upkeep a worker process does on a schedule (purging, pruning, erasing): a pass every
 * `intervalMs` (the first one interval after start), on Periodic, started only in the processes
 * that run it and stopped at shutdown once the pass in progress has ended. A job that one process
 * of a deployment at a time must do takes its advisory lock (LOCK_KEYS) inside the pass, through
 * DirectSessions.withAdvisoryLock, so a pass asked for directly is held to it too.
 */
export abstract class MaintenanceJob implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger: Logger;
  private readonly schedule: Periodic;

  protected constructor(private readonly job: MaintenanceJobOptions) {
    this.logger = new Logger(job.name);
    this.schedule = new Periodic({ intervalMs: job.intervalMs, run: () => this.runPass(), logger: this.logger, failure: job.failure });
  }

  /** One scheduled pass; rejects when it failed (logged, and tried again at the next interval). */
  protected abstract runPass(): Promise<unknown>;

  onApplicationBootstrap(): void {
    if (this.job.runsHere) this.schedule.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.schedule.stop();
  }
}
