import { BigIntType, Entity, EntityRepositoryType, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Organization } from '../organizations/organization.entity';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One webhook: one event sent to one endpoint. Its id is stable across attempts, redeliveries
 * and replays, so receivers can deduplicate on it; the default endpoint's webhook of an event
 * has the event's own id.
 */
@Entity({ tableName: 'webhook_delivery', repository: () => WebhookDeliveryRepository })
export class WebhookDelivery {
  [EntityRepositoryType]?: WebhookDeliveryRepository;

  @PrimaryKey({ type: 'uuid' })
  id: string;

  @Property({ type: 'timestamptz', length: 6 })
  createdAt: Date;

  @ManyToOne(() => Organization, { mapToPk: true, fieldName: 'organization_id', deleteRule: 'cascade' })
  organizationId: string;

  /** The domain event reported, shared by the webhooks of one event (x-service-webhook-event-id). */
  @Property({ type: 'uuid' })
  eventId: string;

  /** The endpoint it is sent to: the organization's id for the default endpoint. */
  @Property({ type: 'uuid' })
  endpointId: string;

  @Property({ type: 'text' })
  webhookType: string;

  @Property({ type: 'text' })
  resourceType: string;

  @Property({ type: 'uuid' })
  resourceId: string;

  @Property({ type: 'text' })
  action: string;

  /** The body exactly as sent. */
  @Property({ type: 'text' })
  payload: string;

  @Property({ type: 'timestamptz', length: 6 })
  eventCreatedAt: Date;

  @Property({ type: 'text' })
  status: DeliveryStatus;

  @Property({ type: 'int' })
  attemptCount: number;

  /** attemptCount when the current retry cycle began (0, or the count at the last redelivery). */
  @Property({ type: 'int' })
  cycleStartAttempt: number;

  @Property({ type: 'timestamptz', length: 6, nullable: true })
  lastAttemptAt: Date | null;

  @Property({ type: 'timestamptz', length: 6, nullable: true })
  nextAttemptAt: Date | null;

  @Property({ type: 'int', nullable: true })
  lastResponseStatus: number | null;

  @Property({ type: 'timestamptz', length: 6, nullable: true })
  succeededAt: Date | null;

  /**
   * The W3C traceparent of the traced request that wrote the event, copied from it when the
   * webhook is made: each attempt's span links to it. Null when tracing is off.
   */
  @Property({ type: 'text', nullable: true })
  traceparent: string | null = null;

  /**
   * Its place among the webhooks of one resource to an endpoint with `ordering: resource` (1, 2,
   * 3…, kept through retries, redeliveries and replays); null for an unordered endpoint.
   */
  @Property({ type: new BigIntType('number'), columnType: 'bigint', nullable: true })
  sequence: number | null = null;
}
