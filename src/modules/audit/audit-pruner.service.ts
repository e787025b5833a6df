import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { AuditEntry } from './audit-entry.entity';

/** Entries deleted per transaction: short transactions, so appends to the same chain wait little. */
const BATCH = 1000;
/** Any fixed number, shared by every instance: one pruner works at a time. */
const PRUNE_LOCK = 7_341_017;

/**
 * Deletes audit entries older than AUDIT_RETENTION, in batches, on worker processes. Each
 * organization's chain is cut only at its oldest end, and the hash of the last entry removed
 * becomes the checkpoint verify starts from, so what remains still proves itself.
 */
@Injectable()
export class AuditPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditPruner');
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
      this.running = this.prune()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'audit prune pass failed'))
        .finally(() => (this.running = null));
    }, this.config.audit.pruneIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * One pass: every entry past retention, batch by batch. Returns how many were deleted, or null
   * when another process holds the pruning lock (it is doing the same work).
   */
  async prune(now = new Date()): Promise<number | null> {
    const cutoff = new Date(now.getTime() - this.config.audit.retentionMs);
    let total = 0;
    for (;;) {
      const deleted = await this.em.fork().transactional(async (em) => {
        const [lock] = await em.execute<{ locked: boolean }[]>('select pg_try_advisory_xact_lock(?) as "locked"', [PRUNE_LOCK]);
        if (!lock.locked) return null;
        const entries = em.getRepository(AuditEntry);
        let count = await entries.pruneUnchainedBefore(cutoff, BATCH);
        for (const organizationId of await entries.organizationsWithEntriesBefore(cutoff, BATCH)) {
          if (count >= BATCH) break;
          count += await entries.pruneBefore(organizationId, cutoff, BATCH - count);
        }
        return count;
      });
      if (deleted === null) return total === 0 ? null : total;
      total += deleted;
      if (deleted === 0) return total;
    }
  }
}
