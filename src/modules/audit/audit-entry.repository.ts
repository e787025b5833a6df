import { EntityRepository } from '@mikro-orm/postgresql';
import type { AuditEntry } from './audit-entry.entity';

export class AuditEntryRepository extends EntityRepository<AuditEntry> {
  /** Newest first: keyset on the time-ordered id, descending. */
  page(organizationId: string, before: string | null, limit: number): Promise<AuditEntry[]> {
    return this.find(before ? { organizationId, id: { $lt: before } } : { organizationId }, {
      orderBy: { id: 'desc' },
      limit,
    });
  }
}
