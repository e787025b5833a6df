import { Entity, PrimaryKey, PrimaryKeyProp, Property } from '@mikro-orm/core';

@Entity({ tableName: 'webhook_attempt' })
export class WebhookAttempt {
  [PrimaryKeyProp]?: ['deliveryId', 'attempt'];

  @PrimaryKey({ type: 'uuid' })
  deliveryId: string;

  @PrimaryKey({ type: 'int' })
  attempt: number;

  @Property({ type: 'timestamptz', length: 6 })
  startedAt: Date;

  @Property({ type: 'int' })
  durationMs: number;

  @Property({ type: 'int', nullable: true })
  responseStatus: number | null;

  @Property({ type: 'text', nullable: true })
  error: string | null;

  /** The first 1,024 bytes the receiver answered, as text; null when no answer came. */
  @Property({ type: 'text', nullable: true })
  responseBody: string | null = null;

  /** The endpoint's adaptive in-flight limit when the attempt started; null when it made no request (or was recorded before the limit adapted). */
  @Property({ type: 'int', nullable: true })
  inFlightLimit: number | null = null;
}
