import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { queryRows } from '../../database/raw-sql';
import { ZERO_ADDRESS } from '../chain/log-decoding';
import type { IndexedTransfer } from './contract-index.rules';

export interface HolderRow {
  holder: string;
  tokenCount: number;
  amount: string;
}

export interface OwnerRow {
  holder: string;
  amount: string;
}

/**
 * The reads of a contract's index, one statement per page. Holders at a block are the latest
 * checkpoint at or below it, with the holders that changed after it replaced by their totals as
 * of the block: a page reads at most one checkpoint's rows and the changes since, never the
 * history.
 */
@Injectable()
export class ContractReadsRepository {
  constructor(private readonly em: EntityManager) {}

  async holdersPage(
    contractId: string,
    block: number,
    after: { amount: string; holder: string } | null,
    limit: number,
  ): Promise<HolderRow[]> {
    const [cp] = await queryRows<{ block: string | null }>(
      this.em,
      `select max("block_number") as "block" from "indexed_contract_checkpoint" where "contract_id" = ? and "block_number" <= ?`,
      [contractId, block],
    );
    const checkpoint = cp.block === null ? -1 : Number(cp.block);
    const rows = await queryRows<{ holder: string; token_count: number; amount_text: string }>(
      this.em,
      // One sort of the checkpoint's rows and the changes after it, the latest row of each holder
      // kept: no join whose plan depends on statistics (a fresh index has none yet).
      `with "rows" as (
         select "holder", "token_count", "amount", -1::bigint as "block_number" from "indexed_contract_checkpoint"
         where "contract_id" = ? and "block_number" = ?
         union all
         select "holder", "token_count", "amount", "block_number" from "indexed_contract_holder_change"
         where "contract_id" = ? and "block_number" > ? and "block_number" <= ?
       ), "latest" as (
         select distinct on ("holder") "holder", "token_count", "amount" from "rows" order by "holder", "block_number" desc
       )
       select l."holder", l."token_count", l."amount"::text as "amount_text" from "latest" l
       where l."amount" > 0 and (?::numeric is null or l."amount" < ?::numeric or (l."amount" = ?::numeric and l."holder" > ?))
       order by l."amount" desc, l."holder" limit ?`,
      [
        contractId,
        checkpoint,
        contractId,
        checkpoint,
        block,
        after?.amount ?? null,
        after?.amount ?? null,
        after?.amount ?? null,
        after?.holder ?? null,
        limit,
      ],
    );
    return rows.map((r) => ({ holder: r.holder, tokenCount: Number(r.token_count), amount: r.amount_text }));
  }

  /** Owners of one token at `block`, from its own transfers (the token index reads only them). */
  async owners(contractId: string, tokenId: string, block: number): Promise<OwnerRow[]> {
    return queryRows<OwnerRow>(
      this.em,
      `select holder, sum(delta)::text as "amount" from (
         select "to_address" as holder, "amount" as delta from "indexed_contract_transfer"
         where "contract_id" = ? and "token_id" = ?::numeric and "block_number" <= ?
         union all
         select "from_address", -"amount" from "indexed_contract_transfer" where "contract_id" = ? and "token_id" = ?::numeric and "block_number" <= ?
       ) m where holder <> ? group by holder having sum(delta) > 0 order by sum(delta) desc, holder collate "C"`,
      [contractId, tokenId, block, contractId, tokenId, block, ZERO_ADDRESS],
    );
  }

  /** Transfers of blocks [fromBlock, toBlock] in chain order, after the given place. */
  async transfersPage(
    contractId: string,
    range: { fromBlock: number; toBlock: number },
    after: { blockNumber: number; logIndex: number; batchIndex: number } | null,
    limit: number,
  ): Promise<IndexedTransfer[]> {
    const rows = await queryRows<{
      block_number: string;
      log_index: number;
      batch_index: number;
      block_hash: string;
      transaction_hash: string;
      from_address: string;
      to_address: string;
      token_id: string;
      amount: string;
    }>(
      this.em,
      `select "block_number", "log_index", "batch_index", "block_hash", "transaction_hash", "from_address", "to_address",
         "token_id"::text as "token_id", "amount"::text as "amount"
       from "indexed_contract_transfer"
       where "contract_id" = ? and "block_number" between ? and ?
         and (?::bigint is null or ("block_number", "log_index", "batch_index") > (?::bigint, ?::integer, ?::integer))
       order by "block_number", "log_index", "batch_index" limit ?`,
      [
        contractId,
        range.fromBlock,
        range.toBlock,
        after?.blockNumber ?? null,
        after?.blockNumber ?? null,
        after?.logIndex ?? null,
        after?.batchIndex ?? null,
        limit,
      ],
    );
    return rows.map((r) => ({
      blockNumber: Number(r.block_number),
      logIndex: r.log_index,
      batchIndex: r.batch_index < 0 ? null : r.batch_index,
      blockHash: r.block_hash,
      transactionHash: r.transaction_hash,
      from: r.from_address,
      to: r.to_address,
      tokenId: r.token_id,
      amount: r.amount,
    }));
  }

  /**
   * The last kept block whose time is at or before `asOf` (a timestamptz literal) and the next
   * kept block above it (blocks between the two moved nothing of the contract).
   */
  async keptBlocksAround(contractId: string, asOf: string): Promise<{ atOrBefore: number | null; next: number | null }> {
    const [row] = await queryRows<{ at_or_before: string | null; next: string | null }>(
      this.em,
      `select b."block_number" as "at_or_before",
         (select min(n."block_number") from "indexed_contract_block" n where n."contract_id" = ? and n."block_number" > b."block_number") as "next"
       from (select max("block_number") as "block_number" from "indexed_contract_block" where "contract_id" = ? and "block_time" <= ?::timestamptz) b`,
      [contractId, contractId, asOf],
    );
    return {
      atOrBefore: row?.at_or_before == null ? null : Number(row.at_or_before),
      next: row?.next == null ? null : Number(row.next),
    };
  }
}
