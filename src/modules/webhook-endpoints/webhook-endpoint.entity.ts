import { ArrayType, Entity, EntityRepositoryType, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { Organization } from '../organizations/organization.entity';
import type { EndpointAuthSettings } from './endpoint-auth.rules';
import type { EndpointTlsSettings } from './endpoint-tls.rules';
import type { ContentFilter } from './content-filter.rules';
import type { DestinationSettings } from './destination.rules';
import type { PayloadKind } from './receiver-choices.rules';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import type { EndpointOrdering } from './webhook-endpoint.rules';

/**
 * A receiver of an organization's webhooks: its url, secret, types and contract filter. Every
 * organization has one default endpoint (`isDefault`, id = the organization's id, the one
 * `/webhook-config` shows): until its first change it has no row and reads as disabled with
 * nothing configured. Only the default may lack a url or a secret, and only while disabled. A
 * broker endpoint has a `destination` instead of a url.
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

  /** The Ed25519 private key (PKCS#8 DER, base64) that adds a `v1a` signature, sealed like the secrets; null when the endpoint signs with its secret only. */
  @Property({ type: 'text', nullable: true, hidden: true })
  signingPrivateKeySealed: string | null = null;

  /** Its public key: the raw 32 bytes, base64 (shown with the `whpk_` prefix). */
  @Property({ type: 'text', nullable: true })
  signingPublicKey: string | null = null;

  /** The key pair a rotation replaced; it signs too until the previous secret expires. */
  @Property({ type: 'text', nullable: true, hidden: true })
  previousSigningPrivateKeySealed: string | null = null;

  @Property({ type: 'text', nullable: true })
  previousSigningPublicKey: string | null = null;

  /** OAuth2 client credentials for receivers that want a bearer token (see endpoint-auth.rules.ts); null when none. */
  @Property({ type: 'json', nullable: true })
  auth: EndpointAuthSettings | null = null;

  /** The OAuth2 client secret, sealed like the shared secret. */
  @Property({ type: 'text', nullable: true, hidden: true })
  authClientSecretSealed: string | null = null;

  /** Mutual TLS towards the receiver: certificates in PEM, subject and expiry read from them (see endpoint-tls.rules.ts); null when none. */
  @Property({ type: 'json', nullable: true })
  tls: EndpointTlsSettings | null = null;

  /** The client certificate's private key (PEM), sealed like the shared secret. */
  @Property({ type: 'text', nullable: true, hidden: true })
  tlsClientKeySealed: string | null = null;

  /** A message broker this endpoint publishes to instead of an HTTP url (destination.rules.ts); its url without credentials. Null: HTTP. */
  @Property({ type: 'json', nullable: true })
  destination: DestinationSettings | null = null;

  /** The user and password of the destination url (JSON), sealed like the shared secret. */
  @Property({ type: 'text', nullable: true, hidden: true })
  destinationCredentialsSealed: string | null = null;

  /** Headers sent on every webhook to this endpoint, names as given (checked by parseCustomHeaders). */
  @Property({ type: 'json' })
  headers: Record<string, string> = {};

  /** At most this many attempts reach the endpoint in any one-second window; null: unlimited. */
  @Property({ type: 'int', nullable: true })
  rateLimitPerSecond: number | null = null;

  /** The ceiling of the endpoint's adaptive in-flight limit; null: WEBHOOK_PER_RECEIVER_CONCURRENCY. */
  @Property({ type: 'int', nullable: true })
  maxInFlight: number | null = null;

  /** `thin` (the event's envelope) or `full` (with `data`, the resource as its GET answers). */
  @Property({ type: 'text' })
  payload: PayloadKind = 'thin';

  /** A content filter every event must match to become a webhook here (content-filter.rules.ts); null: none. */
  @Property({ type: 'json', nullable: true })
  filter: ContentFilter | null = null;

  /** Seconds between attempts, this endpoint's own; null: the service's schedule. */
  @Property({ type: new ArrayType<number>((item) => Number(item)), columnType: 'int[]', nullable: true })
  retrySchedule: number[] | null = null;

  /** Why the service switched the endpoint off ("failing"); null when enabled or switched off by a user. */
  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Property({ type: 'timestamptz', length: 6 })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', length: 6 })
  updatedAt: Date = new Date();

  constructor(init: {
    organizationId: string;
    url: string | null;
    description: string | null;
    enabled: boolean;
    webhookTypes: WebhookType[];
    contractAddresses: string[] | null;
    headers?: Record<string, string>;
    rateLimitPerSecond?: number | null;
    maxInFlight?: number | null;
    ordering?: EndpointOrdering;
    sharedSecretSealed: string;
  }) {
    Object.assign(this, init);
  }
}
