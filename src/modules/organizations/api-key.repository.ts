import { EntityRepository } from '@mikro-orm/postgresql';
import type { ApiKey } from './api-key.entity';

export class ApiKeyRepository extends EntityRepository<ApiKey> {
  findActiveByHash(keyHash: string): Promise<ApiKey | null> {
    return this.findOne({ keyHash, revokedAt: null });
  }

  findInOrganization(organizationId: string, id: string): Promise<ApiKey | null> {
    return this.findOne({ organizationId, id });
  }

  async page(organizationId: string, after: string | null, limit: number): Promise<ApiKey[]> {
    return this.find(after ? { organizationId, id: { $gt: after } } : { organizationId }, { orderBy: { id: 'asc' }, limit });
  }

  /** Keys that still work (revoked ones do not count against the per-organization cap). */
  countActive(organizationId: string): Promise<number> {
    return this.count({ organizationId, revokedAt: null });
  }
}
