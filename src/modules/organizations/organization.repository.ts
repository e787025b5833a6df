import { EntityRepository } from '@mikro-orm/postgresql';
import type { Organization } from './organization.entity';

export class OrganizationRepository extends EntityRepository<Organization> {
  /** Keyset page by id (UUIDv7, so creation order). */
  async page(after: string | null, limit: number): Promise<Organization[]> {
    return this.find(after ? { id: { $gt: after } } : {}, { orderBy: { id: 'asc' }, limit });
  }
}
