import { Entity, EntityRepositoryType, ManyToOne, PrimaryKeyProp, Property } from '@mikro-orm/core';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { Organization } from '../organizations/organization.entity';
import { WebhookConfigRepository } from './webhook-config.repository';

/**
 * The organization's one webhook configuration. A missing row means the defaults (disabled,
 * nothing configured, last updated when the organization was created); the first change inserts
 * it, keyed by the organization so there can never be two.
 */
@Entity({ tableName: 'webhook_config', repository: () => WebhookConfigRepository })
export class WebhookConfig {
  [EntityRepositoryType]?: WebhookConfigRepository;
  [PrimaryKeyProp]?: 'organizationId';

  @ManyToOne(() => Organization, { primary: true, mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @Property({ type: 'text', nullable: true })
  url: string | null;

  @Property({ type: 'boolean' })
  enabled: boolean;

  @Property({ type: 'text[]' })
  webhookTypes: WebhookType[];

  /** AES-256-GCM sealed (see secret-box.ts); opened only to sign a delivery. */
  @Property({ type: 'text', nullable: true, hidden: true })
  sharedSecretSealed: string | null;

  /** The secret a rotation replaced, sealed like the current one; it signs too until it expires. */
  @Property({ type: 'text', nullable: true, hidden: true })
  previousSharedSecretSealed: string | null = null;

  /** When the previous secret stops signing; null when there is none. */
  @Property({ type: 'timestamptz', length: 6, nullable: true })
  previousSecretExpiresAt: Date | null = null;

  /** Why the service switched the endpoint off ("failing"); null when enabled or switched off by a user. */
  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Property({ type: 'timestamptz', length: 6 })
  updatedAt: Date;

  constructor(init: {
    organizationId: string;
    url: string | null;
    enabled: boolean;
    webhookTypes: WebhookType[];
    sharedSecretSealed: string | null;
    updatedAt: Date;
  }) {
    Object.assign(this, init);
  }
}
