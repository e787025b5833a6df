import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { MaintenanceJob } from '../../common/scheduling/maintenance-job';
import { AppConfig, runsWorker } from '../../config/app-config';
import { DirectSessions } from '../../database/direct-sessions';
import { LOCK_KEYS } from '../../database/lock-keys';
import { IDEMPOTENCY_WINDOW_HOURS } from './transaction.rules';
import { execute } from '../../database/raw-sql';

/**
 * Idempotency keys are worth keeping for their 24 h window only (a later retry is taken as a new
 * request anyway); without a purge the table would grow with every keyed write forever. Worker
 * processes delete expired keys in small batches, each its own short transaction, so a purge never
 * holds long locks; an advisory lock lets one worker purge at a time while the others skip.
 */
@Injectable()
export class IdempotencyKeyPurger extends MaintenanceJob {
  constructor(
    private readonly em: EntityManager,
    private readonly sessions: DirectSessions,
    private readonly config: AppConfig,
  ) {
    super({
      name: 'IdempotencyKeyPurger',
      intervalMs: config.maintenance.idempotencyPurgeIntervalMs,
      runsHere: runsWorker(config),
      failure: 'idempotency key purge failed; retrying next interval',
    });
  }

  protected runPass(): Promise<number | null> {
    return this.purge();
  }

  /**
   * Deletes keys past their window, batch after batch, until none is left. Returns how many went,
   * or null when another process holds the purge lock (it is purging already).
   */
  purge(): Promise<number | null> {
    const batchSize = this.config.maintenance.purgeBatchSize;
    return this.sessions.withAdvisoryLock(LOCK_KEYS.idempotencyPurge, async () => {
      let deleted = 0;
      for (;;) {
        const count = await execute(
          this.em.fork(),
          `delete from "idempotency_key" where ctid in (
             select ctid from "idempotency_key" where "created_at" < now() - make_interval(hours => ?) limit ?)
           returning 1`,
          [IDEMPOTENCY_WINDOW_HOURS, batchSize],
        );
        deleted += count;
        if (count < batchSize) return deleted;
      }
    });
  }
}
