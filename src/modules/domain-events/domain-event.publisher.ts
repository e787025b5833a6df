import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { currentTraceparent } from '../../common/tracing/tracing';
import { isDeclaredEvent } from '../../extensions/registry';
import { BUILT_IN_RESOURCE_TYPES, DomainEventInput, EventChanges, WebhookType } from './domain-event.catalogue';
import { DomainEvent } from './domain-event.entity';

/**
 * The only way event rows are written. It takes the EntityManager of the caller's transaction so
 * the event commits, or rolls back, with the data it describes (transactional outbox).
 */
/** An event of an extension module, as it declared it (src/extensions/registry.ts). */
export interface ExtensionEventInput {
  webhookType: WebhookType;
  resourceType: string;
  action: string;
  resourceId: string;
  changes: EventChanges | null;
}

/** Not part of the webhook body: the contract of the token an event is about, for endpoint filters. */
type WithContract<T> = T & { contractAddress?: string | null };

@Injectable()
export class DomainEventPublisher {
  publish(em: EntityManager, organizationId: string, event: WithContract<DomainEventInput | ExtensionEventInput>): DomainEvent {
    if (!BUILT_IN_RESOURCE_TYPES.includes(event.resourceType) && !isDeclaredEvent(event.webhookType, event.resourceType, event.action)) {
      // A programming error, not bad input: the module forgot to declare what it publishes.
      throw new Error(
        `Undeclared domain event ${event.webhookType}/${event.resourceType}.${event.action}: declare it in the module's extension definition.`,
      );
    }
    const row = eventRow(organizationId, event);
    em.persist(row);
    return row;
  }

  /**
   * Writes events in one plain INSERT on the caller's transaction, now rather than at flush: hot
   * write paths skip the unit of work's change-set computation for rows written once. Events
   * are inserted in the given order (their ids are UUIDv7, so they sort so too).
   */
  async publishMany(em: EntityManager, organizationId: string, events: WithContract<DomainEventInput>[]): Promise<DomainEvent[]> {
    const rows = events.map((event) => eventRow(organizationId, event));
    await em.getRepository(DomainEvent).insertRows(rows);
    return rows;
  }
}

/** The one mapping from what a module publishes to the outbox row. */
function eventRow(organizationId: string, event: WithContract<DomainEventInput | ExtensionEventInput>): DomainEvent {
  const row = new DomainEvent({
    organizationId,
    webhookType: event.webhookType,
    resourceType: event.resourceType,
    resourceId: event.resourceId,
    action: event.action,
    changes: event.changes,
  });
  row.contractAddress = event.contractAddress ?? null;
  row.traceparent = currentTraceparent();
  return row;
}
