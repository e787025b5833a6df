import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { keptBlocksDown, KeptBlockRow, KeptBlockTable, storeKeptBlocks } from '../../database/kept-blocks';
import { queryRows } from '../../database/raw-sql';

/** Where one chain's follower stands (a row of chain_cursor). */
export interface ChainCursor {
  chainId: number;
  /** Highest block applied; startBlock - 1 before the first one; null until the node was first reached. */
  appliedBlock: number | null;
  appliedHash: string | null;
  appliedBlockTime: Date | null;
  headBlock: number | null;
  headBlockTime: Date | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

export type StoredBlock = KeptBlockRow;

const KEPT_BLOCKS: KeptBlockTable = { table: 'chain_block', ownerColumn: 'chain_id' };

interface CursorRow {
  chain_id: string;
  applied_block: string | null;
  applied_hash: string | null;
  applied_block_time: Date | string | null;
  head_block: string | null;
  head_block_time: Date | string | null;
  lease_owner: string | null;
  lease_until: Date | string | null;
  last_error: string | null;
  last_error_at: Date | string | null;
}

const CURSOR_COLUMNS = `"chain_id", "applied_block", "applied_hash", "applied_block_time", "head_block", "head_block_time",
  "lease_owner", "lease_until", "last_error", "last_error_at"`;

/** The driver may hand timestamps over as text. */
const toDate = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toCursor(row: CursorRow): ChainCursor {
  return {
    chainId: Number(row.chain_id),
    appliedBlock: row.applied_block === null ? null : Number(row.applied_block),
    appliedHash: row.applied_hash,
    appliedBlockTime: toDate(row.applied_block_time),
    headBlock: row.head_block === null ? null : Number(row.head_block),
    headBlockTime: toDate(row.head_block_time),
    leaseOwner: row.lease_owner,
    leaseUntil: toDate(row.lease_until),
    lastError: row.last_error,
    lastErrorAt: toDate(row.last_error_at),
  };
}

/**
 * The chain module's tables chain_cursor and chain_block. Statements that belong to a follower
 * step take the step's EntityManager (its transaction); the others run on their own.
 */
@Injectable()
export class ChainCursorRepository {
  constructor(private readonly em: EntityManager) {}

  async all(): Promise<ChainCursor[]> {
    const rows = await queryRows<CursorRow>(this.em, `select ${CURSOR_COLUMNS} from "chain_cursor" order by "chain_id"`, []);
    return rows.map(toCursor);
  }

  async find(chainId: number): Promise<ChainCursor | null> {
    const [row] = await queryRows<CursorRow>(this.em, `select ${CURSOR_COLUMNS} from "chain_cursor" where "chain_id" = ?`, [chainId]);
    return row ? toCursor(row) : null;
  }

  /** Creates the chain's cursor (nothing applied yet) on its first start; a cursor already there is kept. */
  async createIfMissing(chainId: number): Promise<void> {
    await queryRows(this.em, `insert into "chain_cursor" ("chain_id") values (?) on conflict ("chain_id") do nothing`, [chainId]);
  }

  /** Takes or renews the chain's lease for `owner` (free, lapsed or already ours); null when another live follower holds it. */
  async acquireLease(chainId: number, owner: string, leaseMs: number): Promise<ChainCursor | null> {
    const [row] = await queryRows<CursorRow>(
      this.em,
      `update "chain_cursor" set "lease_owner" = ?, "lease_until" = clock_timestamp() + ? * interval '1 millisecond', "updated_at" = clock_timestamp()
       where "chain_id" = ? and ("lease_owner" = ? or "lease_owner" is null or "lease_until" < clock_timestamp())
       returning ${CURSOR_COLUMNS}`,
      [owner, leaseMs, chainId, owner],
    );
    return row ? toCursor(row) : null;
  }

  /** The node's head as the lease holder last saw it. */
  async recordHead(chainId: number, owner: string, head: { block: number; time: Date | null }): Promise<void> {
    await queryRows(
      this.em,
      `update "chain_cursor" set "head_block" = ?, "head_block_time" = ?, "updated_at" = clock_timestamp() where "chain_id" = ? and "lease_owner" = ?`,
      [head.block, head.time, chainId, owner],
    );
  }

  /** Where following begins on a chain's first start (the block before the first one to apply). */
  async begin(
    chainId: number,
    owner: string,
    before: { blockNumber: number; blockHash: string | null; blockTime: Date | null },
  ): Promise<void> {
    await queryRows(
      this.em,
      `update "chain_cursor" set "applied_block" = ?, "applied_hash" = ?, "applied_block_time" = ?, "updated_at" = clock_timestamp()
       where "chain_id" = ? and "lease_owner" = ? and "applied_block" is null`,
      [before.blockNumber, before.blockHash, before.blockTime, chainId, owner],
    );
  }

  /** Gives the lease up at shutdown so another instance takes over at once. */
  async releaseLease(chainId: number, owner: string): Promise<void> {
    await queryRows(
      this.em,
      `update "chain_cursor" set "lease_owner" = null, "lease_until" = null where "chain_id" = ? and "lease_owner" = ?`,
      [chainId, owner],
    );
  }

  async recordError(chainId: number, owner: string, error: string | null): Promise<void> {
    await queryRows(
      this.em,
      `update "chain_cursor" set "last_error" = ?, "last_error_at" = case when ?::text is null then "last_error_at" else clock_timestamp() end,
         "updated_at" = clock_timestamp()
       where "chain_id" = ? and "lease_owner" = ?`,
      [error, error, chainId, owner],
    );
  }

  /**
   * The cursor locked for a step, inside the step's transaction: null unless `owner` still holds
   * the lease. The lock orders every write to the chain's ledger rows behind this one step.
   */
  async lockForStep(em: EntityManager, chainId: number, owner: string): Promise<ChainCursor | null> {
    const [row] = await queryRows<CursorRow>(em, `select ${CURSOR_COLUMNS} from "chain_cursor" where "chain_id" = ? for update`, [chainId]);
    if (!row || row.lease_owner !== owner) return null;
    return toCursor(row);
  }

  /** Moves the cursor (forward after a step, back after a reorg) and renews the lease. */
  async moveTo(
    em: EntityManager,
    chainId: number,
    applied: { blockNumber: number; blockHash: string | null; blockTime: Date | null },
    head: { block: number; time: Date | null },
    leaseMs: number,
  ): Promise<void> {
    await queryRows(
      em,
      `update "chain_cursor" set "applied_block" = ?, "applied_hash" = ?, "applied_block_time" = ?, "head_block" = ?, "head_block_time" = ?,
         "lease_until" = clock_timestamp() + ? * interval '1 millisecond', "last_error" = null, "updated_at" = clock_timestamp()
       where "chain_id" = ?`,
      [applied.blockNumber, applied.blockHash, applied.blockTime, head.block, head.time, leaseMs, chainId],
    );
  }

  async storeBlocks(em: EntityManager, chainId: number, blocks: StoredBlock[]): Promise<void> {
    await storeKeptBlocks(em, KEPT_BLOCKS, chainId, blocks);
  }

  /** Stored hashes at or below `atOrBelow`, deepest last: where a reorg walk-back looks. */
  async storedBlocksDown(em: EntityManager, chainId: number, atOrBelow: number, limit: number): Promise<StoredBlock[]> {
    return keptBlocksDown(em, KEPT_BLOCKS, chainId, atOrBelow, limit);
  }

  /** The stored hashes of `blockNumbers` (those the follower kept). */
  async storedHashes(em: EntityManager, chainId: number, blockNumbers: number[]): Promise<Map<number, string>> {
    if (blockNumbers.length === 0) return new Map();
    const rows = await queryRows<{ block_number: string; block_hash: string }>(
      em,
      `select "block_number", "block_hash" from "chain_block" where "chain_id" = ? and "block_number" = any(?::bigint[])`,
      [chainId, blockNumbers],
    );
    return new Map(rows.map((r) => [Number(r.block_number), r.block_hash]));
  }

  /** Forgets hashes above a reorg's common ancestor, or below the depth any reorg may reach. */
  async forgetBlocks(em: EntityManager, chainId: number, range: { above?: number; below?: number }): Promise<void> {
    if (range.above !== undefined) {
      await queryRows(em, `delete from "chain_block" where "chain_id" = ? and "block_number" > ?`, [chainId, range.above]);
    }
    if (range.below !== undefined) {
      await queryRows(em, `delete from "chain_block" where "chain_id" = ? and "block_number" < ?`, [chainId, range.below]);
    }
  }
}
