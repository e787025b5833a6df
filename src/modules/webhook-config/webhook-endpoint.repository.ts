import { LockMode } from '@mikro-orm/core';
import { EntityRepository } from '@mikro-orm/postgresql';
import type { WebhookEndpoint } from './webhook-endpoint.entity';
import { erasePreviousSecretsExpiredBy } from './webhook-config.repository';

export class WebhookEndpointRepository extends EntityRepository<WebhookEndpoint> {
  /** The endpoint if it is this organization's; another organization's is as unknown as a missing one. */
  findOwned(organizationId: string, id: string): Promise<WebhookEndpoint | null> {
    return this.findOne({ id, organizationId });
  }

  /** Like findOwned, and locks the row until the transaction ends. Call inside a transaction. */
  lockOwned(organizationId: string, id: string): Promise<WebhookEndpoint | null> {
    return this.findOne({ id, organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  countFor(organizationId: string): Promise<number> {
    return this.count({ organizationId });
  }

  /** Up to `limit` endpoints of the organization after `afterId`, in id (creation) order. */
  page(organizationId: string, afterId: string | null, limit: number): Promise<WebhookEndpoint[]> {
    return this.find(afterId === null ? { organizationId } : { organizationId, id: { $gt: afterId } }, { orderBy: { id: 'asc' }, limit });
  }

  /**
   * Switches the endpoint off with `reason` if it is still on; whether it did. A concurrent change
   * is waited for and judged after it (the condition is re-read under the row lock).
   */
  async disableIfEnabled(organizationId: string, id: string, reason: string, now: Date): Promise<boolean> {
    const updated = await this.nativeUpdate(
      { id, organizationId, enabled: true },
      { enabled: false, disabledReason: reason, updatedAt: now },
    );
    return updated > 0;
  }

  /**
   * Erases the previous secrets whose window closed at or before `now`; how many were erased.
   * Gives up at once (and is tried again next time) when a change holds the rows or the table.
   */
  erasePreviousSecretsExpiredBy(now: Date): Promise<number> {
    return erasePreviousSecretsExpiredBy(this.em, this.entityName, now);
  }
}
