import { queryRows } from '../../database/raw-sql';
import { EntityRepository } from '@mikro-orm/postgresql';
import type { Wallet } from './wallet.entity';

export interface WalletAtAddress {
  walletId: string;
  organizationId: string;
  address: string;
}

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

  /** Which of `addresses` (lowercase) some wallet of any organization holds: one statement over the address index. */
  async watchedAmong(addresses: string[]): Promise<Set<string>> {
    if (addresses.length === 0) return new Set();
    const rows = await queryRows<{ address: string }>(
      this.getEntityManager(),
      'select distinct "address" from "wallet" where "address" = any(?::text[])',
      [addresses],
    );
    return new Set(rows.map((row) => row.address));
  }

  /**
   * One page of the distinct lowercase addresses held by wallets of all organizations, in address
   * order after `after` (keyset over the address index), at most `limit`.
   */
  async watchedAddressesAfter(after: string | null, limit: number): Promise<string[]> {
    const rows = await queryRows<{ address: string }>(
      this.getEntityManager(),
      'select distinct "address" from "wallet" where "address" is not null and "address" > ? order by "address" limit ?',
      [after ?? '', limit],
    );
    return rows.map((row) => row.address);
  }

  /**
   * Every wallet holding one of `addresses` (lowercase), across organizations, in one statement,
   * oldest first: where an organization has several wallets on one address, its oldest stands for it.
   */
  async byAddresses(addresses: string[]): Promise<WalletAtAddress[]> {
    if (addresses.length === 0) return [];
    const rows = await queryRows<{ id: string; organization_id: string; address: string }>(
      this.getEntityManager(),
      'select "id", "organization_id", "address" from "wallet" where "address" = any(?::text[]) order by "id"',
      [addresses],
    );
    return rows.map((row) => ({ walletId: row.id, organizationId: row.organization_id, address: row.address }));
  }

  /** The wallet's address (null when it has none), or undefined when it is not the organization's. */
  async addressOf(organizationId: string, id: string): Promise<string | null | undefined> {
    const rows = await queryRows<{ address: string | null }>(
      this.getEntityManager(),
      'select "address" from "wallet" where "organization_id" = ? and "id" = ?',
      [organizationId, id],
    );
    return rows.length === 0 ? undefined : rows[0].address;
  }

  findInOrganization(organizationId: string, id: string): Promise<Wallet | null> {
    return this.findOne({ organizationId, id });
  }

  /** Keyset page by id (UUIDv7, so creation order); with `address` (lowercase), only the wallets at that address. */
  page(organizationId: string, after: string | null, limit: number, address: string | null = null): Promise<Wallet[]> {
    return this.find(
      { organizationId, ...(after ? { id: { $gt: after } } : {}), ...(address !== null ? { address } : {}) },
      { orderBy: { id: 'asc' }, limit },
    );
  }
}
