import { EntityManager, EntityRepository } from '@mikro-orm/postgresql';
import { queryRows } from '../../database/raw-sql';
import type { ChainMovement } from './chain-movement.rules';
import type { NftTransaction } from './nft-transaction.entity';

/** What every movement row has, API or chain. */
type MovementRow = Pick<
  NftTransaction,
  'id' | 'createdAt' | 'organizationId' | 'type' | 'tokenId' | 'fromWalletId' | 'toWalletId' | 'amount'
>;

/** The columns every movement row has, in insert order, and their values as unnest arrays. */
const MOVEMENT_COLUMNS = `"id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount"`;
const MOVEMENT_ARRAYS = `?::uuid[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::uuid[], ?::numeric[]`;
function movementArrays(rows: MovementRow[]): unknown[] {
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.createdAt),
    rows.map((r) => r.organizationId),
    rows.map((r) => r.type),
    rows.map((r) => r.tokenId),
    rows.map((r) => r.fromWalletId),
    rows.map((r) => r.toWalletId),
    rows.map((r) => r.amount),
  ];
}

/**
 * Inserts confirmed chain movements in one statement on the caller's transaction, in the given
 * order; a movement already recorded (same organization, chain, transaction, log and batch
 * index) is skipped. Returns how many were inserted.
 */
export async function insertChainMovements(
  em: EntityManager,
  rows: Array<Omit<MovementRow, 'amount'> & { movement: ChainMovement }>,
): Promise<number> {
  const inserted = await queryRows<{ id: string }>(
    em,
    `insert into "nft_transaction" (${MOVEMENT_COLUMNS},
       "source", "status", "chain_id", "block_number", "block_hash", "transaction_hash", "log_index", "batch_index", "chain_from", "chain_to")
     select r."id", r."created_at", r."organization_id", r."type", r."token_id", r."from_wallet_id", r."to_wallet_id", r."amount",
            'chain', 'confirmed', r."chain_id", r."block_number", r."block_hash", r."transaction_hash", r."log_index", r."batch_index",
            r."chain_from", r."chain_to"
       from unnest(${MOVEMENT_ARRAYS},
                   ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::int[], ?::int[], ?::text[], ?::text[])
            with ordinality as r("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount",
                   "chain_id", "block_number", "block_hash", "transaction_hash", "log_index", "batch_index", "chain_from", "chain_to", "n")
      order by r."n"
     on conflict ("organization_id", "chain_id", "transaction_hash", "log_index", coalesce("batch_index", -1))
       where "chain_id" is not null and "status" = 'confirmed'
     do nothing
     returning "id"`,
    [
      ...movementArrays(rows.map((r) => ({ ...r, amount: r.movement.amount }))),
      rows.map((r) => r.movement.chainId),
      rows.map((r) => r.movement.blockNumber),
      rows.map((r) => r.movement.blockHash),
      rows.map((r) => r.movement.transactionHash),
      rows.map((r) => r.movement.logIndex),
      rows.map((r) => r.movement.batchIndex),
      rows.map((r) => r.movement.from),
      rows.map((r) => r.movement.to),
    ],
  );
  return inserted.length;
}

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
      `insert into "nft_transaction" (${MOVEMENT_COLUMNS}) select * from unnest(${MOVEMENT_ARRAYS})`,
      movementArrays(rows),
    );
  }
}
