import { randomBytes } from 'node:crypto';
import { DomainError, notFound, validationFailed } from '../../common/errors/domain-error';
import type { AuditChanges } from '../audit/audit.rules';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import type { PayloadKind } from './receiver-choices.rules';
import type { SigningKeySlots } from './signing-keys.rules';
import { SECRET_SLOT_FIELDS, SecretSlots } from './webhook-config.rules';
import type { WebhookEndpoint } from './webhook-endpoint.entity';
import { TRANSPORT_SECRET_FIELDS, TransportSlots } from './endpoint-transport.rules';
import { credentialsAfter, DestinationCredentials, ParsedDestination } from './destination.rules';
import { EndpointOrdering, missingForEnabled, StoredEndpoint, WebhookEndpointPatch, WebhookEndpointView } from './webhook-endpoint.rules';

/*
 * The pieces of an endpoint change around WebhookEndpointsService: what a request may carry,
 * what a change answers, its audit entry, its refusals, and how checked values land on the row.
 */

export interface WebhookEndpointInput {
  /** Null clears it; only the default endpoint's request format (PATCH webhook-config) lets it through. */
  url?: string | null;
  webhookTypes?: WebhookType[];
  /** Null removes it; only the default endpoint's request format lets it through. */
  sharedSecret?: string | null;
  enabled?: boolean;
  description?: string | null;
  filters?: { contractAddresses?: readonly unknown[] | null } | null;
  /** `{asymmetric: true}` adds Ed25519 (`v1a`) signatures; false or null drops the key pair. */
  signing?: { asymmetric: boolean } | null;
  /** OAuth2 client credentials towards the receiver; null removes them. */
  auth?: { type: string; tokenUrl: string; clientId: string; clientSecret: string; scope?: string | null } | null;
  /** Mutual TLS towards the receiver (PEM); null removes it. */
  tls?: { clientCertificate: string; clientKey: string; caCertificate?: string | null } | null;
  /** Replaces every custom header; null or `{}` removes them (checked by parseCustomHeaders). */
  headers?: unknown;
  /** Null: unlimited (the request DTO has checked the bounds). */
  rateLimitPerSecond?: number | null;
  /** Null: the service's default (the request DTO has checked the bounds). */
  maxInFlight?: number | null;
  ordering?: EndpointOrdering;
  payload?: PayloadKind;
  /** A content filter (checked by parseContentFilter); null removes it. Not on the default endpoint. */
  filter?: unknown;
  /** Seconds between attempts (the request DTO has checked the bounds); null: the service's schedule. */
  retrySchedule?: number[] | null;
  /** A message broker instead of a url (checked by parseDestinationInput); null switches back to HTTP. */
  destination?: unknown;
}

/** Every field of the audit view that holds a secret. */
export const AUDIT_SECRET_FIELDS = [...SECRET_SLOT_FIELDS, ...TRANSPORT_SECRET_FIELDS];

export interface CreatedEndpoint {
  endpoint: WebhookEndpointView;
  /** The secret in clear when the service generated it (shown once); absent when given. */
  sharedSecret?: string;
}

export interface SecretRotation {
  /** The new secret in clear when the service generated it (shown once); absent when given. */
  sharedSecret?: string;
  previousSecretExpiresAt: Date;
}

/** One endpoint of one organization; the default endpoint's id is the organization's. */
export interface EndpointRef {
  organizationId: string;
  endpointId: string;
}

/** Bytes of entropy in a generated secret (base64url: 43 characters). */
const GENERATED_SECRET_BYTES = 32;

/** A new shared secret for an integrator who did not choose one: 32 random bytes, base64url. */
export function generateSharedSecret(): string {
  return randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
}

/** The audit action of an endpoint the service switched off because it keeps failing. */
export const AUTO_DISABLE_ACTION = 'webhookEndpoint.autoDisable';

/**
 * The audit entry of a change to an endpoint. The default endpoint's keep the names they had
 * when it was the only one (`webhookConfig.*`, no endpoint id), so existing audit readers still
 * find them.
 */
export function auditOf(row: StoredEndpoint, verb: 'update' | 'rotateSecret' | 'create' | 'delete', changes: AuditChanges) {
  if (row.isDefault) return { action: `webhookConfig.${verb}`, changes };
  const endpointId = { from: verb === 'create' ? null : row.id, to: verb === 'delete' ? null : row.id };
  return { action: `webhookEndpoint.${verb}`, changes: { endpointId, ...changes } };
}

export function endpointNotFound(endpointId: string): DomainError {
  return notFound('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${endpointId} does not exist.`);
}

export function organizationNotFound(organizationId: string): DomainError {
  return notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
}

/** An enabled endpoint must be able to sign and send (only the default one can be otherwise, while disabled). */
export function assertComplete(state: { enabled: boolean; url: string | null }, slots: SecretSlots, hasDestination = false): void {
  const missing = missingForEnabled(state, slots.sharedSecret, hasDestination);
  if (missing.length === 0) return;
  throw new DomainError(
    422,
    'WEBHOOK_CONFIG_INCOMPLETE',
    `An enabled webhook configuration needs ${missing.join(' and ')}; set ${missing.length > 1 ? 'them' : 'it'} or keep it disabled.`,
    missing.map((field) => ({ field, message: 'is required while the configuration is enabled' })),
  );
}

/** The default endpoint is the webhook configuration: it has no description and no filter. */
/** A request's endpoint fields as the rules take them, with the parts parsed before any lock (filters, headers). */
export function patchOf(
  input: WebhookEndpointInput,
  parsed: Pick<WebhookEndpointPatch, 'contractAddresses' | 'headers' | 'filter'>,
): WebhookEndpointPatch {
  return {
    url: input.url,
    description: input.description,
    enabled: input.enabled,
    webhookTypes: input.webhookTypes,
    ...parsed,
    rateLimitPerSecond: input.rateLimitPerSecond,
    maxInFlight: input.maxInFlight,
    ordering: input.ordering,
    payload: input.payload,
    retrySchedule: input.retrySchedule,
  };
}

export function assertDefaultEndpointFields(input: WebhookEndpointInput): void {
  const refused: string[] = (['description', 'filters', 'filter'] as const).filter((field) => input[field] !== undefined);
  // The default endpoint is the webhook configuration, which posts to a url.
  if (input.destination !== undefined && input.destination !== null) refused.push('destination');
  if (refused.length === 0) return;
  throw new DomainError(
    422,
    'DEFAULT_ENDPOINT',
    `The default endpoint is the webhook configuration, which has no ${refused.join(' and ')}; ` +
      'add another endpoint for a description, filters or a broker destination.',
    refused.map((field) => ({ field, message: 'is not available on the default endpoint' })),
  );
}

export function assignTransport(row: WebhookEndpoint, transport: TransportSlots): void {
  const slots: SigningKeySlots = transport.signing;
  row.signingPrivateKeySealed = slots.privateKey;
  row.signingPublicKey = slots.publicKey;
  row.previousSigningPrivateKeySealed = slots.previousPrivateKey;
  row.previousSigningPublicKey = slots.previousPublicKey;
  row.auth = transport.auth;
  row.authClientSecretSealed = transport.authClientSecret;
  row.tls = transport.tls;
  row.tlsClientKeySealed = transport.tlsClientKey;
  row.destination = transport.destination?.settings ?? null;
  row.destinationCredentialsSealed = transport.destinationCredentials;
}

/**
 * An endpoint other than the default posts to a url or publishes to a broker: exactly one of
 * them (400 naming `destination` when both would be set, `url` when neither). OAuth2 `auth` is
 * HTTP's alone (400 naming `auth` beside a destination).
 */
export function assertOneKind(state: { url: string | null; hasDestination: boolean; hasAuth: boolean; isDefault: boolean }): void {
  if (state.url !== null && state.hasDestination) {
    throw validationFailed([
      {
        field: 'destination',
        message: 'destination cannot be set beside url: an endpoint posts to a url or publishes to a broker (send url: null to switch)',
      },
    ]);
  }
  if (state.url === null && !state.hasDestination && !state.isDefault) {
    throw validationFailed([{ field: 'url', message: 'url or destination is required (send destination: null only with a url)' }]);
  }
  if (state.hasDestination && state.hasAuth) {
    throw validationFailed([
      { field: 'auth', message: 'auth (OAuth2) is for HTTP endpoints only: remove it (auth: null) to publish to a broker' },
    ]);
  }
}

export function assignSlots(row: WebhookEndpoint, slots: SecretSlots): void {
  row.sharedSecretSealed = slots.sharedSecret;
  row.previousSharedSecretSealed = slots.previousSharedSecret;
  row.previousSecretExpiresAt = slots.previousSecretExpiresAt;
}

/**
 * The destination part of an endpoint's transport after a request: left out keeps it, null
 * removes it (back to HTTP), a new one replaces it whole, its url's password `***` keeping the
 * stored one. Credentials that stay the same keep their sealed value (no spurious audit change).
 */
export function destinationTransportAfter(
  input: ParsedDestination | null | undefined,
  before: Pick<TransportSlots, 'destination' | 'destinationCredentials'> | null,
  seal: (credentials: DestinationCredentials | null) => string | null,
): Pick<TransportSlots, 'destination' | 'destinationCredentials'> {
  if (input === undefined)
    return { destination: before?.destination ?? null, destinationCredentials: before?.destinationCredentials ?? null };
  if (input === null) return { destination: null, destinationCredentials: null };
  const stored = before?.destination?.credentials ?? null;
  const credentials = credentialsAfter(input, stored);
  const same = before !== null && JSON.stringify(credentials) === JSON.stringify(stored);
  return {
    destination: { settings: input.settings, credentials },
    destinationCredentials: same ? (before.destinationCredentials ?? null) : seal(credentials),
  };
}
