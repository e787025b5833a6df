import { EntityRepository } from '@mikro-orm/postgresql';
import type { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookAttempt } from './webhook-attempt.entity';

export class WebhookDeliveryRepository extends EntityRepository<WebhookDelivery> {
  /** Newest first, keyset on the time-ordered id. */
  page(organizationId: string, status: DeliveryStatus | undefined, before: string | null, limit: number) {
    return this.find(
      { organizationId, ...(status ? { status } : {}), ...(before ? { id: { $lt: before } } : {}) },
      { orderBy: { id: 'desc' }, limit },
    );
  }

  findInOrganization(organizationId: string, id: string) {
    return this.findOne({ organizationId, id });
  }

  attempts(deliveryId: string) {
    return this.getEntityManager().find(WebhookAttempt, { deliveryId }, { orderBy: { attempt: 'asc' } });
  }
}
