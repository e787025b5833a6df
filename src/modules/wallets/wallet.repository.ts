import { EntityRepository } from '@mikro-orm/postgresql';
import type { Wallet } from './wallet.entity';

export class WalletRepository extends EntityRepository<Wallet> {
  findInOrganization(organizationId: string, id: string): Promise<Wallet | null> {
    return this.findOne({ organizationId, id });
  }

  /** Keyset page by id (UUIDv7, so creation order). */
  page(organizationId: string, after: string | null, limit: number): Promise<Wallet[]> {
    return this.find(after ? { organizationId, id: { $gt: after } } : { organizationId }, { orderBy: { id: 'asc' }, limit });
  }
}
