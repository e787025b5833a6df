import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { keptBlocksDown, KeptBlockRow, KeptBlockTable, storeKeptBlocks } from '../../database/kept-blocks';
import { execute, queryRows } from '../../database/raw-sql';
import { ZERO_ADDRESS } from '../chain/log-decoding';
import { HolderChange, HolderTotals, IndexedTransfer, pairKey } from './contract-index.rules';

/** A block the indexer kept: range ends, blocks with transfers, and fromBlock (reorg checks and `asOf`). */
export interface KeptBlock extends KeptBlockRow {
  blockTime: Date;
}

const KEPT_BLOCKS: KeptBlockTable = { table: 'indexed_contract_block', ownerColumn: 'contract_id' };

/**
 * The writes of an indexer step to a contract's index: its transfers, the balances of each
 * (holder, token), the holders' totals after each block and the checkpoints, all in the step's
 * transaction (`em`). Every statement carries a whole range at once (unnest of arrays).
 */
@Injectable()
export class ContractLedgerRepository {
  async storeBlocks(em: EntityManager, contractId: string, blocks: readonly KeptBlock[]): Promise<void> {
    await storeKeptBlocks(em, KEPT_BLOCKS, contractId, blocks);
  }

  /** Kept blocks at or below `atOrBelow`, deepest last: where a reorg walk-back looks. */
  async keptBlocksDown(em: EntityManager, contractId: string, atOrBelow: number, limit: number): Promise<KeptBlockRow[]> {
    return keptBlocksDown(em, KEPT_BLOCKS, contractId, atOrBelow, limit);
  }

  async insertTransfers(em: EntityManager, contractId: string, transfers: readonly IndexedTransfer[]): Promise<void> {
    if (transfers.length === 0) return;
    await execute(
      em,
      `insert into "indexed_contract_transfer" ("contract_id", "block_number", "log_index", "batch_index", "block_hash", "transaction_hash",
         "from_address", "to_address", "token_id", "amount")
       select ?, * from unnest(?::bigint[], ?::integer[], ?::integer[], ?::text[], ?::text[], ?::text[], ?::text[], ?::numeric[], ?::numeric[])
       on conflict do nothing`,
      [
        contractId,
        transfers.map((t) => t.blockNumber),
        transfers.map((t) => t.logIndex),
        transfers.map((t) => t.batchIndex ?? -1),
        transfers.map((t) => t.blockHash),
        transfers.map((t) => t.transactionHash),
        transfers.map((t) => t.from),
        transfers.map((t) => t.to),
        transfers.map((t) => t.tokenId),
        transfers.map((t) => t.amount),
      ],
    );
  }

  /** Current balances of the given pairs (absent pairs are zero), by pairKey. */
  async balancesOf(
    em: EntityManager,
    contractId: string,
    pairs: readonly { holder: string; tokenId: string }[],
  ): Promise<Map<string, bigint>> {
    const found = new Map<string, bigint>();
    if (pairs.length === 0) return found;
    const rows = await queryRows<{ holder: string; token_id: string; amount: string }>(
      em,
      `select b."holder", b."token_id"::text as "token_id", b."amount"::text as "amount"
       from unnest(?::text[], ?::numeric[]) as p(holder, token_id)
       join "indexed_contract_balance" b on b."contract_id" = ? and b."holder" = p.holder collate "C" and b."token_id" = p.token_id`,
      [pairs.map((p) => p.holder), pairs.map((p) => p.tokenId), contractId],
    );
    for (const row of rows) found.set(pairKey(row.holder, row.token_id), BigInt(row.amount));
    return found;
  }

  /** Current totals of the given holders (absent holders hold nothing). */
  async totalsOf(em: EntityManager, contractId: string, holders: readonly string[]): Promise<Map<string, HolderTotals>> {
    const found = new Map<string, HolderTotals>();
    if (holders.length === 0) return found;
    const rows = await queryRows<{ holder: string; token_count: string; amount: string }>(
      em,
      `select "holder", count(*) filter (where "amount" > 0) as "token_count", coalesce(sum("amount") filter (where "amount" > 0), 0)::text as "amount"
       from "indexed_contract_balance" where "contract_id" = ? and "holder" = any(?::text[]) group by "holder"`,
      [contractId, [...holders]],
    );
    for (const row of rows) found.set(row.holder, { tokenCount: Number(row.token_count), amount: BigInt(row.amount) });
    return found;
  }

  /** Stores the new balances of the touched pairs: zero ones are removed, the others written. */
  async writeBalances(em: EntityManager, contractId: string, balances: Map<string, bigint>): Promise<void> {
    const keep: [string, string, string][] = [];
    const drop: [string, string][] = [];
    for (const [key, amount] of balances) {
      const cut = key.indexOf(':');
      const holder = key.slice(0, cut);
      const tokenId = key.slice(cut + 1);
      if (amount === 0n) drop.push([holder, tokenId]);
      else keep.push([holder, tokenId, amount.toString()]);
    }
    if (drop.length > 0) {
      await execute(
        em,
        `delete from "indexed_contract_balance" b using unnest(?::text[], ?::numeric[]) as p(holder, token_id)
         where b."contract_id" = ? and b."holder" = p.holder collate "C" and b."token_id" = p.token_id`,
        [drop.map((d) => d[0]), drop.map((d) => d[1]), contractId],
      );
    }
    if (keep.length > 0) {
      await execute(
        em,
        `insert into "indexed_contract_balance" ("contract_id", "holder", "token_id", "amount")
         select ?, * from unnest(?::text[], ?::numeric[], ?::numeric[])
         on conflict ("contract_id", "holder", "token_id") do update set "amount" = excluded."amount"`,
        [contractId, keep.map((k) => k[0]), keep.map((k) => k[1]), keep.map((k) => k[2])],
      );
    }
  }

  async insertHolderChanges(em: EntityManager, contractId: string, changes: readonly HolderChange[]): Promise<void> {
    if (changes.length === 0) return;
    await execute(
      em,
      `insert into "indexed_contract_holder_change" ("contract_id", "block_number", "holder", "token_count", "amount")
       select ?, * from unnest(?::bigint[], ?::text[], ?::integer[], ?::numeric[])
       on conflict ("contract_id", "block_number", "holder") do update set "token_count" = excluded."token_count", "amount" = excluded."amount"`,
      [
        contractId,
        changes.map((c) => c.blockNumber),
        changes.map((c) => c.holder),
        changes.map((c) => c.tokenCount),
        changes.map((c) => c.amount.toString()),
      ],
    );
  }

  /** Writes every holder's totals as of `block` (the balances now stand there); returns how many holders it has. */
  async writeCheckpoint(em: EntityManager, contractId: string, block: number): Promise<number> {
    return execute(
      em,
      `insert into "indexed_contract_checkpoint" ("contract_id", "block_number", "holder", "token_count", "amount")
       select ?, ?, "holder", count(*) filter (where "amount" > 0), sum("amount") filter (where "amount" > 0)
       from "indexed_contract_balance" where "contract_id" = ? group by "holder" having count(*) filter (where "amount" > 0) > 0
       on conflict do nothing`,
      [contractId, block, contractId],
    );
  }

  /**
   * Takes back everything above `block` (a reorg's common ancestor): balances lose the movements
   * of the transfers above it, then those transfers, holder changes, checkpoints and kept blocks
   * are deleted. Returns the number of transfers removed.
   */
  async unwindAbove(em: EntityManager, contractId: string, block: number): Promise<number> {
    await execute(
      em,
      `insert into "indexed_contract_balance" ("contract_id", "holder", "token_id", "amount")
       select ?, holder, token_id, -sum(delta) from (
         select "to_address" as holder, "token_id", "amount" as delta from "indexed_contract_transfer" where "contract_id" = ? and "block_number" > ?
         union all
         select "from_address", "token_id", -"amount" from "indexed_contract_transfer" where "contract_id" = ? and "block_number" > ?
       ) m where holder <> ? group by holder, token_id
       on conflict ("contract_id", "holder", "token_id") do update set "amount" = "indexed_contract_balance"."amount" + excluded."amount"`,
      [contractId, contractId, block, contractId, block, ZERO_ADDRESS],
    );
    await execute(em, `delete from "indexed_contract_balance" where "contract_id" = ? and "amount" = 0`, [contractId]);
    const removed = await execute(em, `delete from "indexed_contract_transfer" where "contract_id" = ? and "block_number" > ?`, [
      contractId,
      block,
    ]);
    for (const table of ['indexed_contract_holder_change', 'indexed_contract_checkpoint', 'indexed_contract_block']) {
      await execute(em, `delete from "${table}" where "contract_id" = ? and "block_number" > ?`, [contractId, block]);
    }
    return removed;
  }
}
