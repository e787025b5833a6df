import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import { DomainError, notFound, validationFailed } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import type { ResealReport } from '../../database/sealed-columns';
import { AuditActor, AuditService, SYSTEM_ACTOR } from '../audit/audit.service';
import { diffForAudit } from '../audit/audit.rules';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { Organization } from '../organizations/organization.entity';
import { sealSecret } from './secret-box';
import { checkWebhookUrl, resolveWebhookHost, WebhookHostError, webhookUrlHostname, WebhookUrlPolicy } from '../../common/net/url-policy';
import { WebhookConfig } from './webhook-config.entity';
import { WebhookConfigRepository } from './webhook-config.repository';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { isDefaultEndpoint } from './webhook-endpoint.rules';
import {
  applyWebhookConfigPatch,
  auditedSlots,
  DEFAULT_PREVIOUS_SECRET_VALID_SECONDS,
  DEFAULT_WEBHOOK_CONFIG,
  FAILING_DISABLED_REASON,
  isEmptyPatch,
  livePreviousSecretExpiry,
  missingForEnabled,
  replaceSecretSlots,
  rotateSecretSlots,
  SECRET_SLOT_FIELDS,
  SecretSlots,
  WebhookConfigState,
} from './webhook-config.rules';

/** What the API shows of a configuration: everything but the secret. */
export interface WebhookConfigView {
  url: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  hasSharedSecret: boolean;
  /** When the secret replaced by the last rotation stops signing; null when none still signs. */
  previousSecretExpiresAt: Date | null;
  /** Why the service switched it off ("failing"); shown by the endpoints API, not by webhook-config. */
  disabledReason: string | null;
  updatedAt: Date;
}

/** One endpoint of one organization; the default endpoint's id is the organization's. */
export interface EndpointRef {
  organizationId: string;
  endpointId: string;
}

export interface SecretRotation {
  /** The new secret in clear when the service generated it (shown once); absent when given. */
  sharedSecret?: string;
  previousSecretExpiresAt: Date;
}

export interface WebhookConfigUpdate {
  url?: string | null;
  enabled?: boolean;
  sharedSecret?: string | null;
  webhookTypes?: WebhookType[];
}

/** Bytes of entropy in a generated secret (base64url: 43 characters). */
const GENERATED_SECRET_BYTES = 32;

/** A new shared secret for an integrator who did not choose one: 32 random bytes, base64url. */
export function generateSharedSecret(): string {
  return randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
}

/** The audit action of an endpoint the service switched off because it keeps failing. */
export const AUTO_DISABLE_ACTION = 'webhookEndpoint.autoDisable';

@Injectable()
export class WebhookConfigService {
  constructor(
    private readonly em: EntityManager,
    private readonly configs: WebhookConfigRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async get(organizationId: string): Promise<WebhookConfigView> {
    const row = await this.configs.findByOrganization(organizationId);
    if (row) return toView(row);
    return defaultView(await this.organizationCreatedAt(this.em, organizationId));
  }

  /**
   * Applies a PATCH. Input is checked before any lock is taken (the hostname lookup may take a
   * while); completeness is judged under the row lock against the state the change produces.
   */
  async update(organizationId: string, input: WebhookConfigUpdate, actor: AuditActor, meta: RequestMeta): Promise<WebhookConfigView> {
    if (isEmptyPatch(input)) return this.get(organizationId);
    if (typeof input.url === 'string') await this.assertAcceptableUrl(input.url);
    const sealedSecret =
      typeof input.sharedSecret === 'string'
        ? sealSecret(input.sharedSecret, this.config.secretsEncryptionKey, organizationId)
        : input.sharedSecret;

    return this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookConfig).lockForChange(organizationId);
      if (!row) throw notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
      const before = toState(row);
      const after = applyWebhookConfigPatch(before, {
        url: input.url,
        enabled: input.enabled,
        webhookTypes: input.webhookTypes,
        sharedSecret: sealedSecret,
      });
      const missing = missingForEnabled(after);
      if (missing.length > 0) {
        throw new DomainError(
          422,
          'WEBHOOK_CONFIG_INCOMPLETE',
          `An enabled webhook configuration needs ${missing.join(' and ')}; set ${missing.length > 1 ? 'them' : 'it'} or keep it disabled.`,
          missing.map((field) => ({ field, message: 'is required while the configuration is enabled' })),
        );
      }
      // A secret set by PATCH replaces the old one at once: any rotation's previous secret goes too.
      const slotsBefore = toSlots(row);
      const slotsAfter = input.sharedSecret !== undefined ? replaceSecretSlots(after.sharedSecret) : slotsBefore;
      // A new secret always counts as a change (the sealed values differ), and is shown only as redacted.
      const changes = diffForAudit(
        { ...before, ...auditedSlots(slotsBefore) },
        { ...after, ...auditedSlots(slotsAfter) },
        SECRET_SLOT_FIELDS,
      );
      if (Object.keys(changes).length === 0) return toView(row);

      row.url = after.url;
      row.enabled = after.enabled;
      row.webhookTypes = after.webhookTypes;
      row.disabledReason = after.disabledReason;
      assignSlots(row, slotsAfter);
      row.updatedAt = new Date();
      this.audit.record(em, { organizationId, action: 'webhookConfig.update', actor, meta, changes });
      return toView(row);
    });
  }

  /**
   * Replaces the shared secret while the old one keeps signing beside it for
   * `previousSecretValidSeconds`, so receivers can switch at their own pace without an
   * unverifiable webhook. Without `sharedSecret` one is generated (32 random bytes, base64url) and
   * returned once. Pure slot rules live in webhook-config.rules.ts, so any endpoint that owns a
   * secret can rotate the same way.
   */
  async rotateSecret(
    organizationId: string,
    input: { sharedSecret?: string; previousSecretValidSeconds?: number },
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<SecretRotation> {
    const generated = input.sharedSecret === undefined ? generateSharedSecret() : undefined;
    const sealed = sealSecret(input.sharedSecret ?? (generated as string), this.config.secretsEncryptionKey, organizationId);
    const validSeconds = input.previousSecretValidSeconds ?? DEFAULT_PREVIOUS_SECRET_VALID_SECONDS;

    return this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookConfig).lockForChange(organizationId);
      if (!row) throw notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
      const now = new Date();
      const slotsBefore = toSlots(row);
      const rotation = rotateSecretSlots(slotsBefore, sealed, validSeconds, now);
      if (rotation === null) {
        throw new DomainError(
          422,
          'WEBHOOK_CONFIG_INCOMPLETE',
          'There is no shared secret to rotate; set one with PATCH webhook-config first.',
          [{ field: 'sharedSecret', message: 'is required before it can be rotated' }],
        );
      }
      const changes = diffForAudit(auditedSlots(slotsBefore), auditedSlots(rotation.slots), SECRET_SLOT_FIELDS);
      assignSlots(row, rotation.slots);
      row.updatedAt = now;
      this.audit.record(em, { organizationId, action: 'webhookConfig.rotateSecret', actor, meta, changes });
      return { ...(generated === undefined ? {} : { sharedSecret: generated }), previousSecretExpiresAt: rotation.previousSecretExpiresAt };
    });
  }

  /**
   * Erases every previous secret whose window has closed (delivery already ignores them from the
   * expiry instant on; this removes them from storage). Returns how many were erased.
   */
  async eraseExpiredPreviousSecrets(now = new Date()): Promise<number> {
    // Runs on a timer, outside any request: its own EntityManager. Each table is tried even when
    // the other's rows are held, so one busy table never keeps the other's secrets at rest.
    const erasers = [
      () => this.em.fork().getRepository(WebhookConfig).erasePreviousSecretsExpiredBy(now),
      () => this.em.fork().getRepository(WebhookEndpoint).erasePreviousSecretsExpiredBy(now),
    ];
    let erased = 0;
    const failures: unknown[] = [];
    for (const erase of erasers) {
      try {
        erased += await erase();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
    return erased;
  }

  /**
   * Switches off, with `disabledReason: "failing"`, each given endpoint that is still enabled (the
   * default endpoint is the organization's webhook configuration: `endpointId` equal to
   * `organizationId`), and records each in the organization's audit log with the system as actor.
   * Returns the endpoints it actually switched off: one already off, deleted, or not the
   * organization's is left alone. Each endpoint is its own transaction, so a concurrent PATCH is
   * judged before or after it, never lost.
   */
  async disableFailingEndpoints(endpoints: EndpointRef[], now: Date): Promise<EndpointRef[]> {
    const disabled: EndpointRef[] = [];
    const seen = new Set<string>();
    for (const { organizationId, endpointId } of endpoints) {
      const key = `${organizationId}/${endpointId}`.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      // Runs from a sweep, outside any request: its own EntityManager.
      const done = await this.em.fork().transactional(async (em) => {
        const switchedOff = isDefaultEndpoint(endpointId, organizationId)
          ? await em.getRepository(WebhookConfig).disableIfEnabled(organizationId, FAILING_DISABLED_REASON, now)
          : await em.getRepository(WebhookEndpoint).disableIfEnabled(organizationId, endpointId, FAILING_DISABLED_REASON, now);
        if (!switchedOff) return false;
        this.audit.record(em, {
          organizationId,
          action: AUTO_DISABLE_ACTION,
          actor: SYSTEM_ACTOR,
          meta: { requestId: null, ip: null },
          changes: {
            endpointId: { from: endpointId, to: endpointId },
            enabled: { from: true, to: false },
            disabledReason: { from: null, to: FAILING_DISABLED_REASON },
          },
        });
        return true;
      });
      if (done) disabled.push({ organizationId, endpointId });
    }
    return disabled;
  }

  /**
   * Re-seals this module's stored secrets with the current encryption key (`secrets:reseal`);
   * safe while the service runs, and resumable.
   */
  resealSecrets(batchSize?: number): Promise<ResealReport[]> {
    return this.em.fork().getRepository(WebhookConfig).resealSecrets(this.config.secretsEncryptionKey, batchSize);
  }

  /** The deployment's URL policy, for the delivery code's send-time check. */
  get urlPolicy(): WebhookUrlPolicy {
    const { allowHttp, allowPrivateNetworks, allowedPorts } = this.config.webhook;
    return { allowHttp, allowPrivateNetworks, allowedPorts };
  }

  /**
   * The deployment's URL policy for a webhook receiver (scheme, credentials, port, and what the
   * hostname resolves to): a 400 naming `url` when refused. Every endpoint is held to it.
   */
  async assertAcceptableUrl(url: string): Promise<void> {
    const policy = this.urlPolicy;
    const reason = checkWebhookUrl(url, policy);
    if (reason !== null) throw validationFailed([{ field: 'url', message: `url ${reason}` }]);
    try {
      await resolveWebhookHost(webhookUrlHostname(url), policy);
    } catch (error) {
      if (error instanceof WebhookHostError) throw validationFailed([{ field: 'url', message: `url ${error.message}` }]);
      throw error;
    }
  }

  /** When the organization was created (its default endpoint's creation time); 404 when it does not exist. */
  async organizationCreatedAt(em: EntityManager, organizationId: string): Promise<Date> {
    const organization = await em.findOne(Organization, { id: organizationId }, { fields: ['createdAt'] });
    if (!organization) throw notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
    return organization.createdAt;
  }
}

function toState(row: WebhookConfig): WebhookConfigState {
  return {
    url: row.url,
    enabled: row.enabled,
    webhookTypes: [...row.webhookTypes],
    sharedSecret: row.sharedSecretSealed,
    disabledReason: row.disabledReason,
  };
}

function toSlots(row: WebhookConfig): SecretSlots {
  return {
    sharedSecret: row.sharedSecretSealed,
    previousSharedSecret: row.previousSharedSecretSealed,
    previousSecretExpiresAt: row.previousSecretExpiresAt,
  };
}

function assignSlots(row: WebhookConfig, slots: SecretSlots): void {
  row.sharedSecretSealed = slots.sharedSecret;
  row.previousSharedSecretSealed = slots.previousSharedSecret;
  row.previousSecretExpiresAt = slots.previousSecretExpiresAt;
}

function toView(row: WebhookConfig): WebhookConfigView {
  return {
    url: row.url,
    enabled: row.enabled,
    webhookTypes: [...row.webhookTypes],
    hasSharedSecret: row.sharedSecretSealed !== null,
    previousSecretExpiresAt: livePreviousSecretExpiry(toSlots(row), new Date()),
    disabledReason: row.disabledReason,
    updatedAt: row.updatedAt,
  };
}

function defaultView(updatedAt: Date): WebhookConfigView {
  return {
    url: DEFAULT_WEBHOOK_CONFIG.url,
    enabled: DEFAULT_WEBHOOK_CONFIG.enabled,
    webhookTypes: [...DEFAULT_WEBHOOK_CONFIG.webhookTypes],
    hasSharedSecret: false,
    previousSecretExpiresAt: null,
    disabledReason: null,
    updatedAt,
  };
}
