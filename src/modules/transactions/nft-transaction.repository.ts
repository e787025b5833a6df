import { EntityRepository } from '@mikro-orm/postgresql';
import { queryRows } from '../../database/raw-sql';
import type { NftTransaction } from './nft-transaction.entity';

export class NftTransactionRepository extends EntityRepository<NftTransaction> {
  findInOrganization(organizationId: string, id: string): Promise<NftTransaction | null> {
    return this.findOne({ organizationId, id });
  }

  /**
   * Inserts new (immutable) transactions in one plain statement on this repository's
   * EntityManager (and so its transaction), in the given order: they are never loaded or changed
   * afterwards, so the unit of work would only compute change sets to throw away.
   */
  async insertRows(rows: NftTransaction[]): Promise<void> {
    if (rows.length === 0) return;
    await queryRows(
      this.getEntityManager(),
      `insert into "nft_transaction" ("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount")
       select * from unnest(?::uuid[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::uuid[], ?::numeric[])`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.organizationId),
        rows.map((r) => r.type),
        rows.map((r) => r.tokenId),
        rows.map((r) => r.fromWalletId),
        rows.map((r) => r.toWalletId),
        rows.map((r) => r.amount),
      ],
    );
  }
}
