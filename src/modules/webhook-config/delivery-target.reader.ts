import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { openSecret } from './secret-box';

/**
 * Where and how an organization's webhooks are sent, as the delivery worker needs it: the url,
 * the subscribed types, the enabled switch and the shared secret already opened. `secretError`
 * says why a stored secret could not be opened (wrong key, altered value): the worker then ends
 * the webhook failed with that reason rather than retrying something that can never succeed.
 */
export interface DeliveryTarget {
  organizationId: string;
  url: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  secret: string | null;
  secretError: string | null;
  /** The secret a rotation replaced, signing beside the current one until `expiresAt`. */
  previous: { secret: string; expiresAt: Date } | null;
}

interface ConfigRow {
  organization_id: string;
  url: string | null;
  enabled: boolean;
  webhook_types: string[] | string | null;
  shared_secret_sealed: string | null;
  previous_shared_secret_sealed: string | null;
  previous_secret_expires_at: Date | string | null;
}

const SECRET_CACHE_MAX = 1000;

/**
 * The one mapping from a webhook_config row to a delivery target. The row is read fresh on every
 * call (one statement for any number of organizations), so a change applies to the very next
 * webhook; only the decryption of a sealed value is cached, keyed by the sealed value itself.
 * An organization without a row has the defaults: disabled, nothing configured.
 */
@Injectable()
export class DeliveryTargetReader {
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
  ) {}

  async targets(organizationIds: readonly string[]): Promise<Map<string, DeliveryTarget>> {
    const unique = [...new Set(organizationIds)];
    const out = new Map<string, DeliveryTarget>();
    if (unique.length === 0) return out;
    const result = await this.em
      .getKnex()
      .raw(
        `select organization_id, url, enabled, webhook_types, shared_secret_sealed,
                previous_shared_secret_sealed, previous_secret_expires_at
           from webhook_config where organization_id = any(?::uuid[])`,
        [unique],
      );
    for (const row of result.rows as ConfigRow[]) out.set(row.organization_id, this.toTarget(row));
    for (const id of unique) if (!out.has(id)) out.set(id, defaultTarget(id));
    return out;
  }

  async target(organizationId: string): Promise<DeliveryTarget> {
    return (await this.targets([organizationId])).get(organizationId) as DeliveryTarget;
  }

  private toTarget(row: ConfigRow): DeliveryTarget {
    let secret: string | null = null;
    let secretError: string | null = null;
    if (row.shared_secret_sealed !== null) {
      try {
        secret = this.open(row.shared_secret_sealed, row.organization_id);
      } catch (error) {
        secretError = `the shared secret cannot be opened: ${(error as Error).message}`;
      }
    }
    return {
      organizationId: row.organization_id,
      url: row.url,
      enabled: row.enabled === true,
      webhookTypes: parseTextArray(row.webhook_types) as WebhookType[],
      secret,
      secretError,
      previous: this.previousOf(row),
    };
  }

  /**
   * The previous secret while its window lasts. One that no longer opens only loses its overlap
   * (receivers already have the current secret), so it never fails a webhook.
   */
  private previousOf(row: ConfigRow): DeliveryTarget['previous'] {
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

  private open(sealed: string, organizationId: string): string {
    const cacheKey = `${organizationId}:${sealed}`;
    let plain = this.secrets.get(cacheKey);
    if (plain === undefined) {
      plain = openSecret(sealed, this.config.secretsEncryptionKey, organizationId);
      if (this.secrets.size >= SECRET_CACHE_MAX) this.secrets.clear();
      this.secrets.set(cacheKey, plain);
    }
    return plain;
  }
}

function defaultTarget(organizationId: string): DeliveryTarget {
  return { organizationId, url: null, enabled: false, webhookTypes: [], secret: null, secretError: null, previous: null };
}

/** text[] arrives parsed from pg, or as its literal (`{a,b}`) when no array parser is registered. */
function parseTextArray(value: string[] | string | null): string[] {
  if (value === null) return [];
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((item) => item.replace(/^"|"$/g, ''));
}
