import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '../../config/app-config';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { createHash, KeyObject } from 'node:crypto';
import { connectableDestinationUrl, DestinationCredentials, DestinationSettings, storedDestination } from './destination.rules';
import type { EndpointAuthSettings } from './endpoint-auth.rules';
import type { EndpointTlsSettings } from './endpoint-tls.rules';
import { openSecret } from '../../common/crypto/secret-box';
import { signingKeyFromStored } from './signing-keys.rules';
import type { ContentFilter } from './content-filter.rules';
import type { PayloadKind } from './receiver-choices.rules';

/**
 * Where and how one endpoint's webhooks are sent, as the delivery worker needs it: the url, the
 * subscribed types, the contract filter, the enabled switch and the shared secret already opened.
 * `secretError` says why a stored secret could not be opened (wrong key, altered value): the
 * worker then ends the webhook failed with that reason rather than retrying something that can
 * never succeed. The default endpoint (the one `/webhook-config` shows) has the organization's id.
 */
export interface DeliveryTarget {
  organizationId: string;
  endpointId: string;
  isDefault: boolean;
  url: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  /** Lowercase contract addresses an `nft` or `transaction` webhook must be about; null for none. */
  contractAddresses: string[] | null;
  /** Custom headers sent on every webhook to it (never one the service sets itself). */
  headers: Record<string, string>;
  /** At most this many attempts in any one-second window (across workers); null: unlimited. */
  rateLimitPerSecond: number | null;
  /** The ceiling of its adaptive in-flight limit (across workers); null: WEBHOOK_PER_RECEIVER_CONCURRENCY. */
  maxInFlight: number | null;
  secret: string | null;
  secretError: string | null;
  /** The secret a rotation replaced, signing beside the current one until `expiresAt`. */
  previous: { secret: string; expiresAt: Date } | null;
  /**
   * The Ed25519 keys that add `v1a` signatures, when the endpoint signs asymmetrically: the current
   * one, and the one a rotation replaced until the previous secret expires. Null otherwise.
   */
  signingKeys: { current: KeyObject; previous: { key: KeyObject; expiresAt: Date } | null } | null;
  /** OAuth2 client credentials towards the receiver, the client secret opened; null when none. */
  auth: { tokenUrl: string; clientId: string; clientSecret: string; scope: string | null } | null;
  /** Mutual TLS: the client certificate and its key (opened), and a private CA to trust; null when none. */
  tls: { clientCertificate: string; clientKey: string; caCertificate: string | null } | null;
  /** `resource`: the webhooks of one resource go one at a time in event order, each numbered. */
  ordering: 'none' | 'resource';
  /** When the endpoint last changed (auto-disable judges failures from then on at the earliest). */
  updatedAt: Date;
  /** `full`: bodies carry `data`, the resource as its GET answers. */
  payload: PayloadKind;
  /** The content filter events must match (content-filter.rules.ts); null: none. */
  filter: ContentFilter | null;
  /** The endpoint's own delays between attempts, in milliseconds; null: the service's schedule. */
  retryScheduleMs: number[] | null;
  /**
   * The message broker the endpoint publishes to instead of a url (null: HTTP): its settings, the
   * url to connect to with the credentials opened (never logged), and a fingerprint of everything
   * a connection depends on, so a changed destination gets a new connection.
   */
  destination: { settings: DestinationSettings; connectUrl: string; fingerprint: string } | null;
}

interface EndpointRow {
  endpoint_id: string;
  organization_id: string;
  is_default: boolean;
  url: string | null;
  enabled: boolean;
  webhook_types: string[] | string | null;
  contract_addresses: string[] | string | null;
  headers: Record<string, string> | string | null;
  rate_limit_per_second: number | null;
  max_in_flight: number | null;
  shared_secret_sealed: string | null;
  previous_shared_secret_sealed: string | null;
  previous_secret_expires_at: Date | string | null;
  signing_private_key_sealed: string | null;
  previous_signing_private_key_sealed: string | null;
  auth: EndpointAuthSettings | string | null;
  auth_client_secret_sealed: string | null;
  tls: EndpointTlsSettings | string | null;
  tls_client_key_sealed: string | null;
  updated_at: Date | string;
  ordering: string;
  payload: string;
  filter: ContentFilter | string | null;
  retry_schedule: number[] | string | null;
  destination: DestinationSettings | string | null;
  destination_credentials_sealed: string | null;
}

const SECRET_CACHE_MAX = 1000;

/**
 * The one mapping from stored endpoints to delivery targets. Rows are read fresh on every call
 * (one statement for any number of organizations), so a change applies to the very next webhook;
 * only the decryption of a sealed value is cached, keyed by the sealed value itself. A default
 * endpoint without a row yet is disabled with nothing configured.
 */
@Injectable()
export class DeliveryTargetReader {
  private readonly secrets = new LRUCache<string, string>({ max: SECRET_CACHE_MAX });
  private readonly keys = new LRUCache<string, KeyObject>({ max: SECRET_CACHE_MAX });
  private readonly destinationListeners = new Set<(endpointId: string) => void>();

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
  ) {}

  /** Every endpoint of each organization, the default first. */
  async endpoints(organizationIds: readonly string[]): Promise<Map<string, DeliveryTarget[]>> {
    const unique = [...new Set(organizationIds)];
    const out = new Map<string, DeliveryTarget[]>();
    if (unique.length === 0) return out;
    const rows = await queryRows<EndpointRow>(
      outsideTransaction(this.em),
      `select id as endpoint_id, organization_id, is_default, url, enabled, webhook_types, contract_addresses, headers, rate_limit_per_second, max_in_flight,
              shared_secret_sealed, previous_shared_secret_sealed, previous_secret_expires_at,
              signing_private_key_sealed, previous_signing_private_key_sealed, auth, auth_client_secret_sealed,
              tls, tls_client_key_sealed, updated_at, ordering, payload, filter, retry_schedule,
              destination, destination_credentials_sealed
         from webhook_endpoint where organization_id = any(?::uuid[])
        order by organization_id, is_default desc, id`,
      [unique],
    );
    for (const id of unique) out.set(id, []);
    for (const row of rows) (out.get(row.organization_id) as DeliveryTarget[]).push(this.toTarget(row));
    for (const [id, targets] of out) if (!targets[0]?.isDefault) targets.unshift(defaultTarget(id));
    return out;
  }

  /** The organization's default endpoint. */
  async target(organizationId: string): Promise<DeliveryTarget> {
    return ((await this.endpoints([organizationId])).get(organizationId) as DeliveryTarget[])[0];
  }

  /** One endpoint of the organization; null when it does not exist (never created, or deleted). */
  async endpoint(organizationId: string, endpointId: string): Promise<DeliveryTarget | null> {
    const all = (await this.endpoints([organizationId])).get(organizationId) as DeliveryTarget[];
    return all.find((target) => target.endpointId === endpointId) ?? null;
  }

  private toTarget(row: EndpointRow): DeliveryTarget {
    let secret: string | null = null;
    let secretError: string | null = null;
    if (row.shared_secret_sealed !== null) {
      try {
        secret = this.open(row.shared_secret_sealed, row.organization_id);
      } catch (error) {
        secretError = `the shared secret cannot be opened: ${(error as Error).message}`;
      }
    }
    let signingKeys: DeliveryTarget['signingKeys'] = null;
    if (row.signing_private_key_sealed !== null) {
      try {
        signingKeys = {
          current: this.signingKey(row.signing_private_key_sealed, row.organization_id),
          previous: this.previousSigningKeyOf(row),
        };
      } catch (error) {
        // A receiver that verifies v1a would refuse every webhook: fail them with the reason rather than send.
        secretError ??= `the signing key cannot be opened: ${(error as Error).message}`;
      }
    }
    let auth: DeliveryTarget['auth'] = null;
    if (row.auth !== null && row.auth_client_secret_sealed !== null) {
      const settings: EndpointAuthSettings = typeof row.auth === 'string' ? (JSON.parse(row.auth) as EndpointAuthSettings) : row.auth;
      try {
        const clientSecret = this.open(row.auth_client_secret_sealed, row.organization_id);
        auth = { tokenUrl: settings.tokenUrl, clientId: settings.clientId, clientSecret, scope: settings.scope };
      } catch (error) {
        secretError ??= `the OAuth2 client secret cannot be opened: ${(error as Error).message}`;
      }
    }
    let tls: DeliveryTarget['tls'] = null;
    if (row.tls !== null && row.tls_client_key_sealed !== null) {
      const settings = typeof row.tls === 'string' ? (JSON.parse(row.tls) as EndpointTlsSettings) : row.tls;
      try {
        const clientKey = this.open(row.tls_client_key_sealed, row.organization_id);
        tls = { clientCertificate: settings.clientCertificate, clientKey, caCertificate: settings.caCertificate };
      } catch (error) {
        secretError ??= `the TLS client key cannot be opened: ${(error as Error).message}`;
      }
    }
    let destination: DeliveryTarget['destination'] = null;
    const settings = storedDestination(row.destination);
    if (settings !== null) {
      try {
        const credentials =
          row.destination_credentials_sealed === null
            ? null
            : (JSON.parse(this.open(row.destination_credentials_sealed, row.organization_id)) as DestinationCredentials);
        const connectUrl = connectableDestinationUrl(settings.url, credentials);
        const fingerprint = createHash('sha256')
          .update(JSON.stringify([settings, connectUrl, tls]))
          .digest('base64url');
        destination = { settings, connectUrl, fingerprint };
      } catch (error) {
        secretError ??= `the destination credentials cannot be opened: ${(error as Error).message}`;
      }
    }
    const contracts = row.contract_addresses === null ? null : parseTextArray(row.contract_addresses);
    return {
      organizationId: row.organization_id,
      endpointId: row.endpoint_id,
      isDefault: row.is_default === true,
      url: row.url,
      enabled: row.enabled === true,
      webhookTypes: parseTextArray(row.webhook_types) as WebhookType[],
      contractAddresses: contracts,
      headers: typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : (row.headers ?? {}),
      rateLimitPerSecond: row.rate_limit_per_second,
      maxInFlight: row.max_in_flight,
      secret,
      secretError,
      previous: this.previousOf(row),
      signingKeys,
      auth,
      tls,
      ordering: row.ordering === 'resource' ? 'resource' : 'none',
      updatedAt: new Date(row.updated_at),
      payload: row.payload === 'full' ? 'full' : 'thin',
      filter: typeof row.filter === 'string' ? (JSON.parse(row.filter) as ContentFilter) : row.filter,
      retryScheduleMs:
        row.retry_schedule === null ? null : parseTextArray(row.retry_schedule as string[] | string).map((s) => Number(s) * 1000),
      destination,
    };
  }

  /**
   * Tells this process's delivery engine that an endpoint's destination changed or the endpoint
   * is gone, so its broker connection closes at once (other processes see it in their next read).
   */
  destinationChanged(endpointId: string): void {
    for (const listener of this.destinationListeners) listener(endpointId);
  }

  /** Listens for destinationChanged; returns the way to stop. */
  onDestinationChanged(listener: (endpointId: string) => void): () => void {
    this.destinationListeners.add(listener);
    return () => this.destinationListeners.delete(listener);
  }

  /**
   * The previous secret while its window lasts. One that no longer opens only loses its overlap
   * (receivers already have the current secret), so it never fails a webhook.
   */
  private previousOf(row: EndpointRow): DeliveryTarget['previous'] {
    if (row.previous_shared_secret_sealed === null || row.previous_secret_expires_at === null) return null;
    try {
      return {
        secret: this.open(row.previous_shared_secret_sealed, row.organization_id),
        expiresAt: new Date(row.previous_secret_expires_at),
      };
    } catch {
      return null;
    }
  }

  /** Like previousOf: a replaced key that no longer opens only loses its overlap. */
  private previousSigningKeyOf(row: EndpointRow): { key: KeyObject; expiresAt: Date } | null {
    if (row.previous_signing_private_key_sealed === null || row.previous_secret_expires_at === null) return null;
    try {
      return {
        key: this.signingKey(row.previous_signing_private_key_sealed, row.organization_id),
        expiresAt: new Date(row.previous_secret_expires_at),
      };
    } catch {
      return null;
    }
  }

  private signingKey(sealed: string, organizationId: string): KeyObject {
    let key = this.keys.get(`${organizationId}:${sealed}`);
    if (key === undefined) {
      key = signingKeyFromStored(this.open(sealed, organizationId));
      this.keys.set(`${organizationId}:${sealed}`, key);
    }
    return key;
  }

  private open(sealed: string, organizationId: string): string {
    const cacheKey = `${organizationId}:${sealed}`;
    let plain = this.secrets.get(cacheKey);
    if (plain === undefined) {
      plain = openSecret(sealed, this.config.secretsEncryptionKey, organizationId);
      this.secrets.set(cacheKey, plain);
    }
    return plain;
  }
}

function defaultTarget(organizationId: string): DeliveryTarget {
  return {
    organizationId,
    endpointId: organizationId,
    isDefault: true,
    url: null,
    enabled: false,
    webhookTypes: [],
    contractAddresses: null,
    headers: {},
    rateLimitPerSecond: null,
    maxInFlight: null,
    secret: null,
    secretError: null,
    previous: null,
    signingKeys: null,
    auth: null,
    tls: null,
    ordering: 'none',
    updatedAt: new Date(0),
    payload: 'thin',
    filter: null,
    retryScheduleMs: null,
    destination: null,
  };
}

/** text[] arrives parsed from pg, or as its literal (`{a,b}`) when no array parser is registered. */
function parseTextArray(value: readonly (string | number)[] | string | null): string[] {
  if (typeof value === 'string') {
    const inner = value.replace(/^\{|\}$/g, '');
    return inner === '' ? [] : inner.split(',').map((item) => item.replace(/^"|"$/g, ''));
  }
  return value === null ? [] : value.map(String);
}
