import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import { DomainError, notFound, validationFailed } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import type { ResealReport } from '../../database/sealed-columns';
import { AuditActor, AuditService } from '../audit/audit.service';
import { diffForAudit } from '../audit/audit.rules';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { Organization } from '../organizations/organization.entity';
import { sealSecret } from './secret-box';
import { checkWebhookUrl, resolveWebhookHost, WebhookHostError, webhookUrlHostname, WebhookUrlPolicy } from '../../common/net/url-policy';
import { WebhookConfig } from './webhook-config.entity';
import { WebhookConfigRepository } from './webhook-config.repository';
import {
  applyWebhookConfigPatch,
  DEFAULT_WEBHOOK_CONFIG,
  isEmptyPatch,
  missingForEnabled,
  WebhookConfigState,
} from './webhook-config.rules';

/** What the API shows of a configuration: everything but the secret. */
export interface WebhookConfigView {
  url: string | null;
  enabled: boolean;
  webhookTypes: WebhookType[];
  hasSharedSecret: boolean;
  updatedAt: Date;
}

export interface WebhookConfigUpdate {
  url?: string | null;
  enabled?: boolean;
  sharedSecret?: string | null;
  webhookTypes?: WebhookType[];
}

const SECRET_FIELDS = ['sharedSecret'] as const;

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
  async update(
    organizationId: string,
    input: WebhookConfigUpdate,
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<WebhookConfigView> {
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
      // A new secret always counts as a change (the sealed values differ), and is shown only as redacted.
      const changes = diffForAudit({ ...before }, { ...after }, SECRET_FIELDS);
      if (Object.keys(changes).length === 0) return toView(row);

      row.url = after.url;
      row.enabled = after.enabled;
      row.webhookTypes = after.webhookTypes;
      row.sharedSecretSealed = after.sharedSecret;
      row.updatedAt = new Date();
      this.audit.record(em, { organizationId, action: 'webhookConfig.update', actor, meta, changes });
      return toView(row);
    });
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

  private async assertAcceptableUrl(url: string): Promise<void> {
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

  private async organizationCreatedAt(em: EntityManager, organizationId: string): Promise<Date> {
    const organization = await em.findOne(Organization, { id: organizationId }, { fields: ['createdAt'] });
    if (!organization) throw notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
    return organization.createdAt;
  }
}

function toState(row: WebhookConfig): WebhookConfigState {
  return { url: row.url, enabled: row.enabled, webhookTypes: [...row.webhookTypes], sharedSecret: row.sharedSecretSealed };
}

function toView(row: WebhookConfig): WebhookConfigView {
  return {
    url: row.url,
    enabled: row.enabled,
    webhookTypes: [...row.webhookTypes],
    hasSharedSecret: row.sharedSecretSealed !== null,
    updatedAt: row.updatedAt,
  };
}

function defaultView(updatedAt: Date): WebhookConfigView {
  return {
    url: DEFAULT_WEBHOOK_CONFIG.url,
    enabled: DEFAULT_WEBHOOK_CONFIG.enabled,
    webhookTypes: [...DEFAULT_WEBHOOK_CONFIG.webhookTypes],
    hasSharedSecret: false,
    updatedAt,
  };
}
