import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { EndpointAuthSettings, endpointAuthView, EndpointAuthView } from './endpoint-auth.rules';
import { EndpointTlsSettings, endpointTlsView, EndpointTlsView } from './endpoint-tls.rules';
import type { ContentFilter } from './content-filter.rules';
import { DEFAULT_CHOICES, PayloadKind, storedChoices } from './receiver-choices.rules';
import { DestinationCredentials, DestinationSettings, destinationView } from './destination.rules';
import { publicKeyLabel, SigningKeySlots } from './signing-keys.rules';
import { disabledReasonAfter, livePreviousSecretExpiry, normalizeWebhookTypes, SecretSlots } from './webhook-config.rules';

/** Endpoints an organization may have, its default endpoint included (docs/WEBHOOKS.md "Webhook endpoints"). */
export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;
export const MAX_ENDPOINT_DESCRIPTION_LENGTH = 500;

/**
 * How an endpoint's webhooks are ordered: `none`, each sent as soon as it can be (the most
 * throughput); `resource`, those of one resource one at a time in event order, each carrying its
 * sequence number.
 */
export const ENDPOINT_ORDERINGS = ['none', 'resource'] as const;
export type EndpointOrdering = (typeof ENDPOINT_ORDERINGS)[number];

/** What an endpoint is, as the rules and the audit log compare it (its secrets are in SecretSlots). */
export interface WebhookEndpointState {
  /** Null only on a default endpoint not configured yet (or cleared while disabled). */
  url: string | null;
  description: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  /** Lowercase, sorted, without repeats; null means every contract (no filter). */
  contractAddresses: string[] | null;
  /** Custom headers sent on every webhook (see receiver-options.rules.ts); `{}` for none. */
  headers: Record<string, string>;
  /** Attempts per one-second window at most; null: unlimited. */
  rateLimitPerSecond: number | null;
  /** The ceiling of the adaptive in-flight limit; null: the service's default. */
  maxInFlight: number | null;
  ordering: EndpointOrdering;
  /** What the receiver chose to get (receiver-choices.rules.ts). */
  payload: PayloadKind;
  filter: ContentFilter | null;
  retrySchedule: number[] | null;
  disabledReason: string | null;
}

/** A PATCH of an endpoint, already parsed: addresses lowercase, the secret (if any) sealed elsewhere. */
/** Every field but the service's own `disabledReason`; a null url clears it (only the default endpoint's request format allows that). */
export type WebhookEndpointPatch = Partial<Omit<WebhookEndpointState, 'disabledReason'>>;

/** Everything the API shows of an endpoint (the default one included); never a secret. */
export interface WebhookEndpointView {
  id: string;
  isDefault: boolean;
  /** Null only for a default endpoint not configured yet. */
  url: string | null;
  description: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  /** Lowercase (the API shows them in EIP-55 form); null when there is no filter. */
  contractAddresses: string[] | null;
  headers: Record<string, string>;
  rateLimitPerSecond: number | null;
  maxInFlight: number | null;
  ordering: EndpointOrdering;
  payload: PayloadKind;
  filter: ContentFilter | null;
  retrySchedule: number[] | null;
  hasSharedSecret: boolean;
  previousSecretExpiresAt: Date | null;
  /** `whpk_<base64>` of the Ed25519 public key when the endpoint signs asymmetrically; null otherwise. */
  publicKey: string | null;
  /** The replaced public key while a rotation's overlap lasts; null otherwise. */
  previousPublicKey: string | null;
  /** OAuth2 client credentials without the secret; null when none. */
  auth: EndpointAuthView | null;
  /** Mutual TLS: the client certificate's subject and expiry, without the key; null when none. */
  tls: EndpointTlsView | null;
  /** The message broker it publishes to, the url's password shown as `***`; null for an HTTP endpoint. */
  destination: DestinationSettings | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The organization's default endpoint (the one `/webhook-config` shows) has the organization's id:
 * the one place that asks, for the ids a request names before any row is read.
 */
export function isDefaultEndpoint(endpointId: string, organizationId: string): boolean {
  return endpointId.toLowerCase() === organizationId.toLowerCase();
}

/**
 * Whether one more endpoint would go over the limit, given how many endpoints the organization
 * has beside its default one (which always exists, so it always counts).
 */
export function endpointLimitReached(otherEndpoints: number): boolean {
  return otherEndpoints + 1 >= MAX_ENDPOINTS_PER_ORGANIZATION;
}

/** A new endpoint: enabled unless told otherwise, types as a set in catalogue order. */
export function newEndpointState(input: {
  /** Null for an endpoint that publishes to a broker. */
  url: string | null;
  description?: string | null;
  enabled?: boolean;
  webhookTypes: readonly WebhookType[];
  contractAddresses: string[] | null;
  headers?: Record<string, string>;
  rateLimitPerSecond?: number | null;
  maxInFlight?: number | null;
  ordering?: EndpointOrdering;
  payload?: PayloadKind;
  filter?: ContentFilter | null;
  retrySchedule?: number[] | null;
}): WebhookEndpointState {
  return {
    url: input.url,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    webhookTypes: normalizeWebhookTypes(input.webhookTypes),
    contractAddresses: input.contractAddresses === null ? null : [...input.contractAddresses],
    headers: { ...input.headers },
    rateLimitPerSecond: input.rateLimitPerSecond ?? null,
    maxInFlight: input.maxInFlight ?? null,
    ordering: input.ordering ?? 'none',
    payload: input.payload ?? DEFAULT_CHOICES.payload,
    filter: input.filter ?? null,
    retrySchedule: input.retrySchedule ?? null,
    disabledReason: null,
  };
}

/** The state after a PATCH: fields left out keep their value; setting `enabled` clears the service's reason. */
export function applyEndpointPatch(state: WebhookEndpointState, patch: WebhookEndpointPatch): WebhookEndpointState {
  return {
    url: patch.url !== undefined ? patch.url : state.url,
    description: patch.description !== undefined ? patch.description : state.description,
    enabled: patch.enabled ?? state.enabled,
    webhookTypes: patch.webhookTypes !== undefined ? normalizeWebhookTypes(patch.webhookTypes) : [...state.webhookTypes],
    contractAddresses: patch.contractAddresses !== undefined ? patch.contractAddresses : copy(state.contractAddresses),
    // Replaced as a whole, like the filter: the request lists every header the endpoint is to have.
    headers: { ...(patch.headers ?? state.headers) },
    rateLimitPerSecond: patch.rateLimitPerSecond !== undefined ? patch.rateLimitPerSecond : state.rateLimitPerSecond,
    maxInFlight: patch.maxInFlight !== undefined ? patch.maxInFlight : state.maxInFlight,
    ordering: patch.ordering ?? state.ordering,
    payload: patch.payload ?? state.payload,
    filter: patch.filter !== undefined ? patch.filter : state.filter,
    retrySchedule: patch.retrySchedule !== undefined ? patch.retrySchedule : state.retrySchedule,
    disabledReason: disabledReasonAfter(state.disabledReason, patch.enabled),
  };
}

/**
 * What an enabled endpoint still lacks to sign and send a webhook; empty when complete or
 * disabled (a disabled default endpoint may be saved half-done; the others are always complete).
 */
export function missingForEnabled(
  state: Pick<WebhookEndpointState, 'enabled' | 'url'>,
  sharedSecret: string | null,
  hasDestination = false,
): Array<'url' | 'sharedSecret'> {
  if (!state.enabled) return [];
  const missing: Array<'url' | 'sharedSecret'> = [];
  // A broker destination is where a webhook goes instead of a url.
  if (state.url === null && !hasDestination) missing.push('url');
  if (sharedSecret === null) missing.push('sharedSecret');
  return missing;
}

/** Whether a request changes nothing (every field left out). */
export function isEmptyPatch(patch: object): boolean {
  return Object.values(patch).every((value) => value === undefined);
}

/** An endpoint row as the rules read it (the entity's own fields; no ORM needed). */
export interface StoredEndpoint {
  id: string;
  isDefault: boolean;
  url: string | null;
  description: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  contractAddresses: string[] | null;
  headers: Record<string, string>;
  rateLimitPerSecond: number | null;
  maxInFlight: number | null;
  ordering: EndpointOrdering;
  payload: string;
  filter: ContentFilter | null;
  retrySchedule: number[] | null;
  sharedSecretSealed: string | null;
  previousSharedSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  signingPrivateKeySealed: string | null;
  signingPublicKey: string | null;
  previousSigningPrivateKeySealed: string | null;
  previousSigningPublicKey: string | null;
  auth: EndpointAuthSettings | null;
  authClientSecretSealed: string | null;
  tls: EndpointTlsSettings | null;
  tlsClientKeySealed: string | null;
  destination: DestinationSettings | null;
  destinationCredentialsSealed: string | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function endpointState(row: StoredEndpoint): WebhookEndpointState {
  return {
    url: row.url,
    description: row.description,
    enabled: row.enabled,
    webhookTypes: [...row.webhookTypes],
    contractAddresses: copy(row.contractAddresses),
    headers: { ...row.headers },
    rateLimitPerSecond: row.rateLimitPerSecond,
    maxInFlight: row.maxInFlight,
    ordering: row.ordering,
    ...storedChoices(row),
    disabledReason: row.disabledReason,
  };
}

export function endpointSlots(row: StoredEndpoint): SecretSlots {
  return {
    sharedSecret: row.sharedSecretSealed,
    previousSharedSecret: row.previousSharedSecretSealed,
    previousSecretExpiresAt: row.previousSecretExpiresAt,
  };
}

export function endpointSigningSlots(row: StoredEndpoint): SigningKeySlots {
  return {
    privateKey: row.signingPrivateKeySealed,
    publicKey: row.signingPublicKey,
    previousPrivateKey: row.previousSigningPrivateKeySealed,
    previousPublicKey: row.previousSigningPublicKey,
  };
}

/** What the API shows of an endpoint; `credentials`: its destination's, opened by the caller (only the user is shown). */
export function endpointView(row: StoredEndpoint, now: Date, credentials: DestinationCredentials | null = null): WebhookEndpointView {
  const previousSecretExpiresAt = livePreviousSecretExpiry(endpointSlots(row), now);
  return {
    id: row.id,
    isDefault: row.isDefault,
    url: row.url,
    description: row.description,
    enabled: row.enabled,
    webhookTypes: [...row.webhookTypes],
    contractAddresses: copy(row.contractAddresses),
    headers: { ...row.headers },
    rateLimitPerSecond: row.rateLimitPerSecond,
    maxInFlight: row.maxInFlight,
    ordering: row.ordering,
    ...storedChoices(row),
    hasSharedSecret: row.sharedSecretSealed !== null,
    previousSecretExpiresAt,
    publicKey: publicKeyLabel(row.signingPublicKey),
    // The replaced pair signs only while the previous secret does: shown exactly as long.
    previousPublicKey: previousSecretExpiresAt === null ? null : publicKeyLabel(row.previousSigningPublicKey),
    auth: endpointAuthView(row.auth, row.authClientSecretSealed),
    tls: endpointTlsView(row.tls, row.tlsClientKeySealed),
    destination: row.destination === null ? null : destinationView(row.destination, credentials),
    disabledReason: row.disabledReason,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * The default endpoint of an organization that never changed it (it has no row yet): disabled,
 * nothing configured, created and last changed when the organization was.
 */
export function unconfiguredDefault(organizationId: string, organizationCreatedAt: Date): StoredEndpoint {
  return {
    id: organizationId,
    isDefault: true,
    url: null,
    description: null,
    enabled: false,
    webhookTypes: [],
    contractAddresses: null,
    headers: {},
    rateLimitPerSecond: null,
    maxInFlight: null,
    ordering: 'none',
    ...DEFAULT_CHOICES,
    sharedSecretSealed: null,
    previousSharedSecretSealed: null,
    previousSecretExpiresAt: null,
    signingPrivateKeySealed: null,
    signingPublicKey: null,
    previousSigningPrivateKeySealed: null,
    previousSigningPublicKey: null,
    auth: null,
    authClientSecretSealed: null,
    tls: null,
    tlsClientKeySealed: null,
    destination: null,
    destinationCredentialsSealed: null,
    disabledReason: null,
    createdAt: organizationCreatedAt,
    updatedAt: organizationCreatedAt,
  };
}

/**
 * How to read one page of the list, whose order is the default endpoint first, then the others
 * by id (creation order). A page key holds the id of the last endpoint served: the default's
 * (the organization id) means the others start from the beginning.
 */
export function endpointPagePlan(
  organizationId: string,
  lastServedId: string | null,
  pageSize: number,
): { includeDefault: boolean; afterId: string | null; othersLimit: number } {
  const includeDefault = lastServedId === null;
  const afterId = lastServedId === null || isDefaultEndpoint(lastServedId, organizationId) ? null : lastServedId.toLowerCase();
  // One more than fits tells whether a next page exists.
  return { includeDefault, afterId, othersLimit: pageSize + 1 - (includeDefault ? 1 : 0) };
}

function copy(addresses: string[] | null): string[] | null {
  return addresses === null ? null : [...addresses];
}
