import { Entity, PrimaryKey, PrimaryKeyProp, Property } from '@mikro-orm/core';

/**
 * A remembered answer for an Idempotency-Key. Written only with SQL inside the transaction of the
 * request it guards (see TransactionsService), so it exists exactly when that request committed.
 */
@Entity({ tableName: 'idempotency_key' })
export class IdempotencyKey {
  [PrimaryKeyProp]?: ['organizationId', 'scope', 'key'];

  @PrimaryKey({ type: 'uuid' })
  organizationId: string;

  /** The operation the key belongs to, e.g. `POST /v1/transactions`. */
  @PrimaryKey({ type: 'text' })
  scope: string;

  @PrimaryKey({ type: 'text' })
  key: string;

  /** SHA-256 of the normalised request, to tell a retry from a different request under the same key. */
  @Property({ type: 'text' })
  requestHash: string;

  @Property({ type: 'integer', nullable: true })
  responseStatus: number | null;

  @Property({ type: 'jsonb', nullable: true })
  responseBody: unknown;

  @Property({ type: 'timestamptz', length: 6 })
  createdAt: Date;
}
