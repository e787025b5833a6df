import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal, Role } from '../../common/auth/principal';
import { DomainError, notFound } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { AuditActor, AuditService } from '../audit/audit.service';
import { ApiKeyCache } from './api-key-cache';
import { ApiKey } from './api-key.entity';
import { ApiKeyRepository } from './api-key.repository';
import { generateApiKey, hashApiKey, isWellFormedApiKey, normalizeRoles } from './api-key.rules';
import { Organization } from './organization.entity';
import { OrganizationRepository } from './organization.repository';

@Injectable()
export class OrganizationsService {
  /** Short-lived: its TTL bounds how long a key revoked on another instance keeps working here. */
  private readonly keyCache: ApiKeyCache;

  constructor(
    private readonly em: EntityManager,
    private readonly organizations: OrganizationRepository,
    private readonly apiKeys: ApiKeyRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {
    this.keyCache = new ApiKeyCache(config.apiKeyCacheTtlMs);
  }

  async createOrganization(name: string, actor: AuditActor, meta: RequestMeta): Promise<Organization> {
    const organization = new Organization(name.trim());
    await this.em.transactional((em) => {
      em.persist(organization);
      this.audit.record(em, {
        organizationId: organization.id,
        action: 'organization.create',
        actor,
        meta,
        changes: { name: { from: null, to: organization.name } },
      });
    });
    return organization;
  }

  async listOrganizations(pageSize: number, pageKey?: string): Promise<Page<Organization>> {
    const after = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.organizations.page(after, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }

  async getOrganization(organizationId: string): Promise<Organization> {
    const organization = await this.organizations.findOne({ id: organizationId });
    if (!organization) throw notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
    return organization;
  }

  async createApiKey(
    organizationId: string,
    input: { name: string; roles: Role[] },
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<{ apiKey: ApiKey; key: string }> {
    await this.getOrganization(organizationId);
    const generated = generateApiKey();
    const apiKey = new ApiKey({
      organizationId,
      name: input.name.trim(),
      roles: normalizeRoles(input.roles),
      keyHash: generated.keyHash,
      keyPrefix: generated.keyPrefix,
    });
    await this.em.transactional(async (em) => {
      // One creation at a time per organization, so that concurrent requests cannot pass the cap together.
      await em.getRepository(Organization).lockForNewChildren(organizationId);
      const active = await em.getRepository(ApiKey).countActive(organizationId);
      if (active >= this.config.apiKeysPerOrganization) {
        throw new DomainError(
          422,
          'API_KEY_LIMIT_REACHED',
          `The organization already has ${active} active API keys, the most allowed (${this.config.apiKeysPerOrganization}); revoke one first.`,
        );
      }
      em.persist(apiKey);
      this.audit.record(em, {
        organizationId,
        action: 'apiKey.create',
        actor,
        meta,
        changes: {
          apiKeyId: { from: null, to: apiKey.id },
          name: { from: null, to: apiKey.name },
          roles: { from: null, to: apiKey.roles },
        },
      });
    });
    return { apiKey, key: generated.key };
  }

  async listApiKeys(organizationId: string, pageSize: number, pageKey?: string): Promise<Page<ApiKey>> {
    const after = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.apiKeys.page(organizationId, after, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }

  /** Idempotent: revoking a revoked key succeeds and keeps the first revocation time. */
  async revokeApiKey(organizationId: string, apiKeyId: string, actor: AuditActor, meta: RequestMeta): Promise<void> {
    const apiKey = await this.apiKeys.findInOrganization(organizationId, apiKeyId);
    if (!apiKey) throw notFound('API_KEY_NOT_FOUND', `API key ${apiKeyId} does not exist.`);
    if (apiKey.revokedAt === null) {
      await this.em.transactional((em) => {
        apiKey.revokedAt = new Date();
        em.persist(apiKey);
        this.audit.record(em, {
          organizationId,
          action: 'apiKey.revoke',
          actor,
          meta,
          changes: { revokedAtUtc: { from: null, to: apiKey.revokedAt.toISOString() } },
        });
      });
    }
    this.keyCache.forget(apiKey.keyHash);
  }

  async authenticate(key: string): Promise<ApiKeyPrincipal | null> {
    // A string that no key generator ever produced is refused without hashing or a lookup.
    if (!isWellFormedApiKey(key)) return null;
    const keyHash = hashApiKey(key);
    const cached = this.keyCache.get(keyHash);
    if (cached !== undefined) return cached;

    const apiKey = await this.em.fork().getRepository(ApiKey).findActiveByHash(keyHash);
    const principal: ApiKeyPrincipal | null = apiKey
      ? {
          kind: 'apiKey',
          organizationId: apiKey.organizationId,
          apiKeyId: apiKey.id,
          keyPrefix: apiKey.keyPrefix,
          roles: apiKey.roles,
        }
      : null;
    this.keyCache.remember(keyHash, principal);
    return principal;
  }
}
