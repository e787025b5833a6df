import { Entity, EntityRepositoryType, ManyToOne, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../database/base.entity';
import { Organization } from '../organizations/organization.entity';
import type { EventChanges, WebhookType } from './domain-event.catalogue';
import { DomainEventRepository } from './domain-event.repository';

/**
 * A row of the transactional outbox. It is written in the same transaction as the change it
 * describes; `relayedAt` is set once the event has been handed to the delivery queue.
 */
@Entity({ tableName: 'domain_event', repository: () => DomainEventRepository })
export class DomainEvent extends BaseEntity<'relayedAt' | 'processedAt'> {
  [EntityRepositoryType]?: DomainEventRepository;

  @ManyToOne(() => Organization, { mapToPk: true, fieldName: 'organization_id', deleteRule: 'cascade' })
  organizationId: string;

  @Property({ type: 'text' })
  webhookType: WebhookType;

  @Property({ type: 'text' })
  resourceType: string;

  @Property({ type: 'uuid' })
  resourceId: string;

  @Property({ type: 'text' })
  action: string;

  @Property({ type: 'jsonb', nullable: true })
  changes: EventChanges | null;

  /** The contract (lowercase) of the token the event is about, for endpoint filters; null otherwise. */
  @Property({ type: 'text', nullable: true })
  contractAddress: string | null = null;

  /**
   * The W3C traceparent of the traced API request that wrote the event, so the work it causes
   * (relay, webhook attempts) can link back to it; null when tracing is off.
   */
  @Property({ type: 'text', nullable: true })
  traceparent: string | null = null;

  /** Set once the event's job is in the queue. */
  @Property({ type: 'timestamptz', length: 6, nullable: true })
  relayedAt: Date | null = null;

  /** Set once the delivery worker has judged the event (a webhook created, or nothing to send). */
  @Property({ type: 'timestamptz', length: 6, nullable: true })
  processedAt: Date | null = null;

  constructor(init: Pick<DomainEvent, 'organizationId' | 'webhookType' | 'resourceType' | 'resourceId' | 'action' | 'changes'>) {
    super();
    Object.assign(this, init);
  }
}
