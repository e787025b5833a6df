import { Entity, EntityRepositoryType, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { Organization } from '../organizations/organization.entity';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import type { EndpointOrdering } from './webhook-endpoint.rules';

/**
 * A receiver of an organization's webhooks: its url, secret, types and contract filter. Every
 * organization has one default endpoint (`isDefault`, id = the organization's id, the one
 * `/webhook-config` shows): until its first change it has no row and reads as disabled with
 * nothing configured. Only the default may lack a url or a secret, and only while disabled.
 */
@Entity({ tableName: 'webhook_endpoint', repository: () => WebhookEndpointRepository })
export class WebhookEndpoint {
  [EntityRepositoryType]?: WebhookEndpointRepository;

  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Organization, { mapToPk: true, fieldName: 'organization_id', deleteRule: 'cascade' })
  organizationId: string;

  @Property({ type: 'boolean' })
  isDefault: boolean = false;

  @Property({ type: 'text', nullable: true })
  url: string | null;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'boolean' })
  enabled: boolean;

  @Property({ type: 'text[]' })
  webhookTypes: WebhookType[];

  /** Lowercase contract addresses; null means no filter. */
  @Property({ type: 'text[]', nullable: true })
  contractAddresses: string[] | null = null;

  /** `resource`: the webhooks of one resource are sent one at a time in event order, numbered. */
  @Property({ type: 'text' })
  ordering: EndpointOrdering = 'none';

  /** AES-256-GCM sealed with the organization id as context (see secret-box.ts); opened only to sign. */
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
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', length: 6 })
  updatedAt: Date = new Date();

  constructor(init: {
    organizationId: string;
    url: string;
    description: string | null;
    enabled: boolean;
    webhookTypes: WebhookType[];
    contractAddresses: string[] | null;
    ordering?: EndpointOrdering;
    sharedSecretSealed: string;
  }) {
    Object.assign(this, init);
  }
}
