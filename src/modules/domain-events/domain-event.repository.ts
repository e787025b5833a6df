import { EntityRepository } from '@mikro-orm/postgresql';
import { queryRows } from '../../database/raw-sql';
import type { DomainEvent } from './domain-event.entity';

export class DomainEventRepository extends EntityRepository<DomainEvent> {
  forResource(organizationId: string, resourceId: string): Promise<DomainEvent[]> {
    return this.find({ organizationId, resourceId }, { orderBy: { id: 'asc' } });
  }

  /**
   * Inserts new events in one plain statement on this repository's EntityManager (and so its
   * transaction), in the given order: no unit of work, no change sets for rows written once.
   */
  async insertRows(rows: DomainEvent[]): Promise<void> {
    if (rows.length === 0) return;
    await queryRows(
      this.getEntityManager(),
      `insert into "domain_event" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action", "changes", "contract_address", "traceparent")
       select * from unnest(?::uuid[], ?::timestamptz[], ?::uuid[], ?::text[], ?::text[], ?::uuid[], ?::text[], ?::jsonb[], ?::text[], ?::text[])`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.organizationId),
        rows.map((r) => r.webhookType),
        rows.map((r) => r.resourceType),
        rows.map((r) => r.resourceId),
        rows.map((r) => r.action),
        rows.map((r) => (r.changes === null ? null : JSON.stringify(r.changes))),
        rows.map((r) => r.contractAddress),
        rows.map((r) => r.traceparent),
      ],
    );
  }
}
