import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { MaintenanceJob } from '../../common/scheduling/maintenance-job';
import { AppConfig, runsWorker } from '../../config/app-config';
import { DirectSessions } from '../../database/direct-sessions';
import { LOCK_KEYS } from '../../database/lock-keys';
import { AuditEntry } from './audit-entry.entity';

/** Entries deleted per transaction: short transactions, so appends to the same chain wait little. */
const BATCH = 1000;

/**
 * Deletes audit entries older than AUDIT_RETENTION, in batches, on worker processes. Each
 * organization's chain is cut only at its oldest end, and the hash of the last entry removed
 * becomes the checkpoint verify starts from, so what remains still proves itself.
 */
@Injectable()
export class AuditPruner extends MaintenanceJob {
  constructor(
    private readonly em: EntityManager,
    private readonly sessions: DirectSessions,
    private readonly config: AppConfig,
  ) {
    super({
      name: 'AuditPruner',
      intervalMs: config.audit.pruneIntervalMs,
      runsHere: runsWorker(config),
      failure: 'audit prune pass failed',
    });
  }

  protected runPass(): Promise<number | null> {
    return this.prune();
  }

  /**
   * One pass: every entry past retention, batch by batch. Returns how many were deleted, or null
   * when another process holds the pruning lock (it is doing the same work).
   */
  prune(now = new Date()): Promise<number | null> {
    const cutoff = new Date(now.getTime() - this.config.audit.retentionMs);
    return this.sessions.withAdvisoryLock(LOCK_KEYS.auditPrune, async () => {
      let total = 0;
      for (;;) {
        const deleted = await this.em.fork().transactional(async (em) => {
          const entries = em.getRepository(AuditEntry);
          let count = await entries.pruneUnchainedBefore(cutoff, BATCH);
          for (const organizationId of await entries.organizationsWithEntriesBefore(cutoff, BATCH)) {
            if (count >= BATCH) break;
            count += await entries.pruneBefore(organizationId, cutoff, BATCH - count);
          }
          return count;
        });
        total += deleted;
        if (deleted === 0) return total;
      }
    });
  }
}
