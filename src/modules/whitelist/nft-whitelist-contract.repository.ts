import { EntityRepository } from '@mikro-orm/postgresql';
import type { NftWhitelistContract } from './nft-whitelist-contract.entity';
import { queryRows } from '../../database/raw-sql';

export class NftWhitelistContractRepository extends EntityRepository<NftWhitelistContract> {
  /** Keyset page in address order (the primary key index serves it). */
  page(organizationId: string, after: string | null, limit: number): Promise<NftWhitelistContract[]> {
    return this.find(after ? { organizationId, contractAddress: { $gt: after } } : { organizationId }, {
      orderBy: { contractAddress: 'asc' },
      limit,
    });
  }

  countFor(organizationId: string): Promise<number> {
    return this.count({ organizationId });
  }

  /**
   * One statement for the whole batch; addresses already present are skipped by the primary key.
   * Returns the addresses that were actually inserted.
   *
   * @param addresses lowercase, validated addresses (they are inlined as SQL literals).
   */
  async insertMissing(organizationId: string, addresses: readonly string[]): Promise<string[]> {
    if (addresses.length === 0) return [];
    const rows = await queryRows<{ contract_address: string }>(
      this.em,
      `insert into "nft_whitelist_contract" ("organization_id", "contract_address", "created_at")
       select ?, address, now() from unnest(?::text[]) as address
       on conflict ("organization_id", "contract_address") do nothing
       returning "contract_address"`,
      [organizationId, [...addresses]],
    );
    return rows.map((row) => row.contract_address);
  }

  /** True when the address was on the whitelist. */
  async deleteOne(organizationId: string, address: string): Promise<boolean> {
    const rows = await queryRows<{ contract_address: string }>(
      this.em,
      `delete from "nft_whitelist_contract" where "organization_id" = ? and "contract_address" = ?
       returning "contract_address"`,
      [organizationId, address],
    );
    return rows.length > 0;
  }
}
