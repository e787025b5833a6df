import { queryRows } from '../../database/raw-sql';
import { EntityRepository } from '@mikro-orm/postgresql';
import type { Wallet } from './wallet.entity';

export class WalletRepository extends EntityRepository<Wallet> {
  /** Which of `ids` are wallets of the organization: one plain statement, no entities loaded. */
  async existingIds(organizationId: string, ids: string[]): Promise<Set<string>> {
    const rows = await queryRows<{ id: string }>(
      this.getEntityManager(),
      'select "id" from "wallet" where "organization_id" = ? and "id" = any(?::uuid[])',
      [organizationId, ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  findInOrganization(organizationId: string, id: string): Promise<Wallet | null> {
    return this.findOne({ organizationId, id });
  }

  /** Keyset page by id (UUIDv7, so creation order). */
  page(organizationId: string, after: string | null, limit: number): Promise<Wallet[]> {
    return this.find(after ? { organizationId, id: { $gt: after } } : { organizationId }, { orderBy: { id: 'asc' }, limit });
  }
}
