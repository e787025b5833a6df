import { EntityRepository } from '@mikro-orm/postgresql';
import type { Organization } from './organization.entity';
import { execute } from '../../database/raw-sql';

export class OrganizationRepository extends EntityRepository<Organization> {
  /** Keyset page by id (UUIDv7, so creation order). */
  async page(after: string | null, limit: number): Promise<Organization[]> {
    return this.find(after ? { id: { $gt: after } } : {}, { orderBy: { id: 'asc' }, limit });
  }

  /** When the organization was created, or null when it does not exist; read on this repository's EntityManager (and so its transaction). */
  async createdAtOf(organizationId: string): Promise<Date | null> {
    const organization = await this.findOne({ id: organizationId }, { fields: ['createdAt'] });
    return organization?.createdAt ?? null;
  }

  /**
   * Locks the organization's row until the transaction ends, so that capped creations under it
   * run one after the other. FOR NO KEY UPDATE leaves other writes that merely reference the
   * organization (wallets, tokens, ...) unblocked. Call inside a transaction.
   */
  async lockForNewChildren(organizationId: string): Promise<void> {
    await execute(this.em, 'select 1 from "organization" where "id" = ? for no key update', [organizationId]);
  }
}
