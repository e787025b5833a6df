import { LockMode } from '@mikro-orm/core';
import { EntityRepository } from '@mikro-orm/postgresql';
import type { WebhookConfig } from './webhook-config.entity';

export class WebhookConfigRepository extends EntityRepository<WebhookConfig> {
  findByOrganization(organizationId: string): Promise<WebhookConfig | null> {
    return this.findOne({ organizationId });
  }

  /**
   * Makes sure the organization's row exists (with the defaults it had implicitly, so nothing
   * observable changes) and locks it until the transaction ends. Concurrent changes to one
   * organization's configuration therefore run one after the other, each judging the state the
   * previous one left. Null when the organization does not exist. Call inside a transaction.
   */
  async lockForChange(organizationId: string): Promise<WebhookConfig | null> {
    await this.em.execute(
      `insert into "webhook_config" ("organization_id", "updated_at")
       select "id", "created_at" from "organization" where "id" = ?
       on conflict ("organization_id") do nothing`,
      [organizationId],
      'run',
    );
    return this.findOne({ organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }
}
