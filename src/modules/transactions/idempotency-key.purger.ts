import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { IDEMPOTENCY_WINDOW_HOURS } from './transaction.rules';

/** Any fixed number, distinct from the migration lock: the purge's advisory lock. */
const PURGE_LOCK = 7_341_015;

/**
 * Idempotency keys are worth keeping for their 24 h window only (a later retry is taken as a new
 * request anyway); without a purge the table would grow with every keyed write forever. Worker
 * processes delete expired keys in small batches, each its own short transaction, so a purge never
 * holds long locks; an advisory lock lets one worker purge at a time while the others skip.
 */
@Injectable()
export class IdempotencyKeyPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyKeyPurger');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.role === 'api') return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.purge()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'idempotency key purge failed; retrying next interval'))
        .finally(() => (this.running = null));
    }, this.config.maintenance.idempotencyPurgeIntervalMs);
    this.timer.unref();
  }

  /**
   * Deletes keys past their window, batch after batch, until none is left. Returns how many went,
   * or null when another process holds the purge lock (it is purging already).
   */
  async purge(): Promise<number | null> {
    const batchSize = this.config.maintenance.purgeBatchSize;
    let deleted = 0;
    for (;;) {
      const batch = await this.em.fork().transactional(async (em) => {
        const [{ locked }] = await em.execute<Array<{ locked: boolean }>>('select pg_try_advisory_xact_lock(?) as locked', [PURGE_LOCK]);
        if (!locked) return null;
        const rows = await em.execute(
          `delete from "idempotency_key" where ctid in (
             select ctid from "idempotency_key" where "created_at" < now() - make_interval(hours => ?) limit ?)
           returning 1`,
          [IDEMPOTENCY_WINDOW_HOURS, batchSize],
        );
        return rows.length;
      });
      if (batch === null) return deleted === 0 ? null : deleted;
      deleted += batch;
      if (batch < batchSize) return deleted;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
