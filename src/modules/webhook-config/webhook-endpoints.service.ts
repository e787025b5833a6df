import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import { DomainError, notFound, unprocessable } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { AppConfig } from '../../config/app-config';
import { diffForAudit } from '../audit/audit.rules';
import { AuditActor, AuditService } from '../audit/audit.service';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { sealSecret } from './secret-box';
import { WebhookConfig } from './webhook-config.entity';
import {
  DEFAULT_PREVIOUS_SECRET_VALID_SECONDS,
  replaceSecretSlots,
  rotateSecretSlots,
  SECRET_SLOT_FIELDS,
  SecretSlots,
} from './webhook-config.rules';
import { generateSharedSecret, SecretRotation, WebhookConfigService } from './webhook-config.service';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import {
  applyEndpointPatch,
  auditedEndpoint,
  defaultEndpointView,
  endpointLimitReached,
  endpointPagePlan,
  endpointSlots,
  endpointState,
  endpointView,
  isDefaultEndpoint,
  MAX_ENDPOINTS_PER_ORGANIZATION,
  newEndpointState,
  parseContractAddressFilter,
  WebhookEndpointView,
} from './webhook-endpoint.rules';

export interface WebhookEndpointInput {
  url?: string;
  webhookTypes?: WebhookType[];
  sharedSecret?: string;
  enabled?: boolean;
  description?: string | null;
  filters?: { contractAddresses?: readonly unknown[] | null } | null;
}

export interface CreatedEndpoint {
  endpoint: WebhookEndpointView;
  /** The secret in clear when the service generated it (shown once); absent when given. */
  sharedSecret?: string;
}

const CREATE_ACTION = 'webhookEndpoint.create';
const UPDATE_ACTION = 'webhookEndpoint.update';
const DELETE_ACTION = 'webhookEndpoint.delete';
const ROTATE_ACTION = 'webhookEndpoint.rotateSecret';

/**
 * The organization's webhook endpoints (CONTRACT.md section 12). The default endpoint is the
 * webhook configuration itself, so everything about it goes through WebhookConfigService and its
 * rules; the others live in webhook_endpoint, each with its own url, secret, types and filter.
 */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly em: EntityManager,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly webhookConfig: WebhookConfigService,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  /** One page: the default endpoint first, then the others in creation order. */
  async list(organizationId: string, pageSize: number, pageKey?: string): Promise<Page<WebhookEndpointView>> {
    const lastServed = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const plan = endpointPagePlan(organizationId, lastServed, pageSize);
    const views: WebhookEndpointView[] = plan.includeDefault ? [await this.defaultEndpoint(organizationId)] : [];
    const now = new Date();
    for (const row of await this.endpoints.page(organizationId, plan.afterId, plan.othersLimit)) views.push(endpointView(row, now));
    return toPage(views, pageSize, (last) => encodePageKey([last.id]));
  }

  async get(organizationId: string, endpointId: string): Promise<WebhookEndpointView> {
    if (isDefaultEndpoint(endpointId, organizationId)) return this.defaultEndpoint(organizationId);
    const row = await this.endpoints.findOwned(organizationId, endpointId);
    if (!row) throw endpointNotFound(endpointId);
    return endpointView(row, new Date());
  }

  /**
   * Adds an endpoint. The organization's webhook configuration row is locked first, so concurrent
   * creations count one after the other and the limit holds exactly.
   */
  async create(organizationId: string, input: WebhookEndpointInput, actor: AuditActor, meta: RequestMeta): Promise<CreatedEndpoint> {
    const contractAddresses = parseContractAddressFilter(input.filters?.contractAddresses);
    await this.webhookConfig.assertAcceptableUrl(input.url as string);
    const generated = input.sharedSecret === undefined ? generateSharedSecret() : undefined;
    const sealed = sealSecret(input.sharedSecret ?? (generated as string), this.config.secretsEncryptionKey, organizationId);

    const endpoint = await this.em.transactional(async (em) => {
      if (!(await em.getRepository(WebhookConfig).lockForChange(organizationId))) {
        throw notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
      }
      const endpoints = em.getRepository(WebhookEndpoint);
      const others = await endpoints.countFor(organizationId);
      if (endpointLimitReached(others)) {
        throw unprocessable(
          'ENDPOINT_LIMIT_REACHED',
          `An organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints, its default endpoint included; ` +
            'delete one before adding another.',
        );
      }
      const now = new Date();
      const state = newEndpointState({
        url: input.url as string,
        description: input.description,
        enabled: input.enabled,
        webhookTypes: input.webhookTypes ?? [],
        contractAddresses,
      });
      const row = new WebhookEndpoint({
        organizationId,
        url: state.url,
        description: state.description,
        enabled: state.enabled,
        webhookTypes: state.webhookTypes,
        contractAddresses: state.contractAddresses,
        sharedSecretSealed: sealed,
      });
      row.createdAt = now;
      row.updatedAt = now;
      em.persist(row);
      this.audit.record(em, {
        organizationId,
        action: CREATE_ACTION,
        actor,
        meta,
        changes: {
          endpointId: { from: null, to: row.id },
          ...diffForAudit({}, auditedEndpoint(endpointState(row), endpointSlots(row)), SECRET_SLOT_FIELDS),
        },
      });
      return row;
    });
    return { endpoint: endpointView(endpoint, new Date()), ...(generated === undefined ? {} : { sharedSecret: generated }) };
  }

  /**
   * Applies a PATCH. On the default endpoint this is the webhook configuration's PATCH (same
   * rules, same code); description and filters do not exist there. Input is checked before any
   * lock is taken (the hostname lookup may take a while).
   */
  async update(
    organizationId: string,
    endpointId: string,
    input: WebhookEndpointInput,
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<WebhookEndpointView> {
    if (isDefaultEndpoint(endpointId, organizationId)) {
      assertDefaultEndpointFields(input);
      await this.webhookConfig.update(
        organizationId,
        { url: input.url, enabled: input.enabled, sharedSecret: input.sharedSecret, webhookTypes: input.webhookTypes },
        actor,
        meta,
      );
      return this.defaultEndpoint(organizationId);
    }

    const contractAddresses = input.filters === undefined ? undefined : parseContractAddressFilter(input.filters?.contractAddresses);
    if (input.url !== undefined) await this.webhookConfig.assertAcceptableUrl(input.url);
    const sealedSecret =
      input.sharedSecret === undefined ? undefined : sealSecret(input.sharedSecret, this.config.secretsEncryptionKey, organizationId);

    return this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookEndpoint).lockOwned(organizationId, endpointId);
      if (!row) throw endpointNotFound(endpointId);
      const before = endpointState(row);
      const after = applyEndpointPatch(before, {
        url: input.url,
        description: input.description,
        enabled: input.enabled,
        webhookTypes: input.webhookTypes,
        contractAddresses,
      });
      // A secret set by PATCH replaces the old one at once: any rotation's previous secret goes too.
      const slotsBefore = endpointSlots(row);
      const slotsAfter = sealedSecret !== undefined ? replaceSecretSlots(sealedSecret) : slotsBefore;
      const changes = diffForAudit(auditedEndpoint(before, slotsBefore), auditedEndpoint(after, slotsAfter), SECRET_SLOT_FIELDS);
      const now = new Date();
      if (Object.keys(changes).length === 0) return endpointView(row, now);

      row.url = after.url;
      row.description = after.description;
      row.enabled = after.enabled;
      row.webhookTypes = after.webhookTypes;
      row.contractAddresses = after.contractAddresses;
      row.disabledReason = after.disabledReason;
      assignSlots(row, slotsAfter);
      row.updatedAt = now;
      this.audit.record(em, {
        organizationId,
        action: UPDATE_ACTION,
        actor,
        meta,
        changes: { endpointId: { from: row.id, to: row.id }, ...changes },
      });
      return endpointView(row, now);
    });
  }

  /** Deletes an endpoint other than the default one (which is the webhook configuration). */
  async delete(organizationId: string, endpointId: string, actor: AuditActor, meta: RequestMeta): Promise<void> {
    if (isDefaultEndpoint(endpointId, organizationId)) {
      throw unprocessable(
        'DEFAULT_ENDPOINT',
        'The default endpoint is the webhook configuration and cannot be deleted; disable it with PATCH instead.',
      );
    }
    await this.em.transactional(async (em) => {
      const endpoints = em.getRepository(WebhookEndpoint);
      const row = await endpoints.lockOwned(organizationId, endpointId);
      if (!row) throw endpointNotFound(endpointId);
      const changes = diffForAudit(auditedEndpoint(endpointState(row), endpointSlots(row)), {}, SECRET_SLOT_FIELDS);
      em.remove(row);
      this.audit.record(em, {
        organizationId,
        action: DELETE_ACTION,
        actor,
        meta,
        changes: { endpointId: { from: row.id, to: null }, ...changes },
      });
    });
  }

  /**
   * Rotates an endpoint's secret with an overlap (CONTRACT.md section 11); on the default endpoint,
   * exactly the webhook configuration's rotation.
   */
  async rotateSecret(
    organizationId: string,
    endpointId: string,
    input: { sharedSecret?: string; previousSecretValidSeconds?: number },
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<SecretRotation> {
    if (isDefaultEndpoint(endpointId, organizationId)) return this.webhookConfig.rotateSecret(organizationId, input, actor, meta);

    const generated = input.sharedSecret === undefined ? generateSharedSecret() : undefined;
    const sealed = sealSecret(input.sharedSecret ?? (generated as string), this.config.secretsEncryptionKey, organizationId);
    const validSeconds = input.previousSecretValidSeconds ?? DEFAULT_PREVIOUS_SECRET_VALID_SECONDS;

    return this.em.transactional(async (em) => {
      const row = await em.getRepository(WebhookEndpoint).lockOwned(organizationId, endpointId);
      if (!row) throw endpointNotFound(endpointId);
      const now = new Date();
      const slotsBefore = endpointSlots(row);
      const rotation = rotateSecretSlots(slotsBefore, sealed, validSeconds, now);
      // Every endpoint beside the default one has a secret from its creation on.
      if (rotation === null) throw new Error(`webhook endpoint ${row.id} has no shared secret`);
      const state = endpointState(row);
      const changes = diffForAudit(auditedEndpoint(state, slotsBefore), auditedEndpoint(state, rotation.slots), SECRET_SLOT_FIELDS);
      assignSlots(row, rotation.slots);
      row.updatedAt = now;
      this.audit.record(em, {
        organizationId,
        action: ROTATE_ACTION,
        actor,
        meta,
        changes: { endpointId: { from: row.id, to: row.id }, ...changes },
      });
      return { ...(generated === undefined ? {} : { sharedSecret: generated }), previousSecretExpiresAt: rotation.previousSecretExpiresAt };
    });
  }

  private async defaultEndpoint(organizationId: string): Promise<WebhookEndpointView> {
    const createdAt = await this.webhookConfig.organizationCreatedAt(this.em, organizationId);
    return defaultEndpointView(organizationId, await this.webhookConfig.get(organizationId), createdAt);
  }
}

function endpointNotFound(endpointId: string): DomainError {
  return notFound('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${endpointId} does not exist.`);
}

/** The default endpoint is exactly the seed's configuration: it has no description and no filter. */
function assertDefaultEndpointFields(input: WebhookEndpointInput): void {
  const refused = (['description', 'filters'] as const).filter((field) => input[field] !== undefined);
  if (refused.length === 0) return;
  throw new DomainError(
    422,
    'DEFAULT_ENDPOINT',
    `The default endpoint is the webhook configuration, which has no ${refused.join(' and ')}; ` +
      'add another endpoint for a description or filters.',
    refused.map((field) => ({ field, message: 'is not available on the default endpoint' })),
  );
}

function assignSlots(row: WebhookEndpoint, slots: SecretSlots): void {
  // Endpoints beside the default one always keep a secret (rotation and PATCH both set one).
  row.sharedSecretSealed = slots.sharedSecret as string;
  row.previousSharedSecretSealed = slots.previousSharedSecret;
  row.previousSecretExpiresAt = slots.previousSecretExpiresAt;
}
