import type { EntityManager } from '@mikro-orm/postgresql';
import { execute, queryRows } from './raw-sql';

/**
 * A table of block hashes a chain reader keeps for its reorg checks: one row per (owner, block),
 * where the owner is what reads the chain (a followed chain, an indexed contract). The chain
 * follower and the contract indexer keep theirs alike, so they store and walk them alike.
 * `table` and `ownerColumn` are the caller's own constants, never input.
 */
export interface KeptBlockTable {
  table: string;
  ownerColumn: string;
}

export interface KeptBlockRow {
  blockNumber: number;
  blockHash: string;
  blockTime: Date | null;
}

/** Stores the blocks (a whole range in one statement); a block stored again takes the new hash and time. */
export async function storeKeptBlocks(
  em: EntityManager,
  { table, ownerColumn }: KeptBlockTable,
  ownerId: string | number,
  blocks: readonly KeptBlockRow[],
): Promise<void> {
  if (blocks.length === 0) return;
  await execute(
    em,
    `insert into "${table}" ("${ownerColumn}", "block_number", "block_hash", "block_time")
     select ?, n, h, t from unnest(?::bigint[], ?::text[], ?::timestamptz[]) as b(n, h, t)
     on conflict ("${ownerColumn}", "block_number") do update set "block_hash" = excluded."block_hash", "block_time" = excluded."block_time"`,
    [
      ownerId,
      blocks.map((b) => b.blockNumber),
      blocks.map((b) => b.blockHash),
      blocks.map((b) => (b.blockTime === null ? null : b.blockTime.toISOString())),
    ],
  );
}

/** Kept blocks at or below `atOrBelow`, deepest last: where a reorg walk-back looks. */
export async function keptBlocksDown(
  em: EntityManager,
  { table, ownerColumn }: KeptBlockTable,
  ownerId: string | number,
  atOrBelow: number,
  limit: number,
): Promise<KeptBlockRow[]> {
  const rows = await queryRows<{ block_number: string; block_hash: string; block_time: Date | string | null }>(
    em,
    `select "block_number", "block_hash", "block_time" from "${table}" where "${ownerColumn}" = ? and "block_number" <= ?
     order by "block_number" desc limit ?`,
    [ownerId, atOrBelow, limit],
  );
  return rows.map((r) => ({
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    blockTime: r.block_time === null ? null : new Date(r.block_time),
  }));
}
