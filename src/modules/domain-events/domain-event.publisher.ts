import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { DomainEventInput } from './domain-event.catalogue';
import { DomainEvent } from './domain-event.entity';

/**
 * The only way event rows are written. It takes the EntityManager of the caller's transaction so
 * the event commits, or rolls back, with the data it describes (transactional outbox).
 */
@Injectable()
export class DomainEventPublisher {
  publish(em: EntityManager, organizationId: string, event: DomainEventInput): DomainEvent {
    const row = new DomainEvent({
      organizationId,
      webhookType: event.webhookType,
      resourceType: event.resourceType,
      resourceId: event.resourceId,
      action: event.action,
      changes: event.changes,
    });
    em.persist(row);
    return row;
  }
}
