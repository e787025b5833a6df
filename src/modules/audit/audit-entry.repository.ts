import { EntityRepository } from '@mikro-orm/postgresql';
import { formatDbTimestamp } from '../../common/time';
import { GENESIS_HASH, type ExportedAuditEntry } from './audit-chain';
import type { AuditEntry } from './audit-entry.entity';
import { queryRows } from '../../database/raw-sql';

/** An entry read straight from the table for verify and export: no entity, no identity map. */
export interface ChainedEntry extends ExportedAuditEntry {
  seq: number;
  hash: string | null;
}

/** Where an organization's chain stands: its head, and the checkpoint retention left behind. */
export interface ChainState {
  headSeq: number;
  headHash: string;
  checkpointSeq: number;
  checkpointHash: string;
  /** First position hashed with AUDIT_CHAIN_KEY (null: none yet), and the keyed seal over it and the head. */
  keyedFromSeq: number | null;
  chainSeal: string | null;
}

interface ChainRow {
  id: string;
  action: string;
  api_key_id: string | null;
  key_prefix: string | null;
  request_id: string | null;
  ip: string | null;
  created_at: string | Date;
  changes: ExportedAuditEntry['changes'];
  chain_seq: string;
  hash: string | null;
}

const toChained = (row: ChainRow): ChainedEntry => ({
  id: row.id,
  action: row.action,
  apiKeyId: row.api_key_id,
  keyPrefix: row.key_prefix,
  requestId: row.request_id,
  ip: row.ip,
  createdAtUtc: formatDbTimestamp(row.created_at),
  changes: row.changes,
  seq: Number(row.chain_seq),
  hash: row.hash,
});

export class AuditEntryRepository extends EntityRepository<AuditEntry> {
  /** Newest first: keyset on the time-ordered id, descending. */
  page(organizationId: string, before: string | null, limit: number): Promise<AuditEntry[]> {
    return this.find(before ? { organizationId, id: { $lt: before } } : { organizationId }, {
      orderBy: { id: 'desc' },
      limit,
    });
  }

  async chainState(organizationId: string): Promise<ChainState> {
    const [row] = await this.getEntityManager().execute<
      {
        head_seq: string;
        head_hash: string;
        checkpoint_seq: string;
        checkpoint_hash: string;
        keyed_from_seq: string | null;
        chain_seal: string | null;
      }[]
    >(
      `select "head_seq", "head_hash", "checkpoint_seq", "checkpoint_hash", "keyed_from_seq", "chain_seal"
         from "audit_chain" where "organization_id" = ?`,
      [organizationId],
    );
    if (!row) {
      return { headSeq: 0, headHash: GENESIS_HASH, checkpointSeq: 0, checkpointHash: GENESIS_HASH, keyedFromSeq: null, chainSeal: null };
    }
    return {
      headSeq: Number(row.head_seq),
      headHash: row.head_hash,
      checkpointSeq: Number(row.checkpoint_seq),
      checkpointHash: row.checkpoint_hash,
      keyedFromSeq: row.keyed_from_seq === null ? null : Number(row.keyed_from_seq),
      chainSeal: row.chain_seal,
    };
  }

  /** Chain order, keyset on the chain position: one page at a time however long the chain. */
  async chainPage(organizationId: string, afterSeq: number, limit: number, untilSeq = Number.MAX_SAFE_INTEGER): Promise<ChainedEntry[]> {
    const rows = await this.getEntityManager().execute<ChainRow[]>(
      `select "id", "action", "api_key_id", "key_prefix", "request_id", "ip", "created_at", "changes", "chain_seq", "hash"
         from "audit_entry"
        where "organization_id" = ? and "chain_seq" > ? and "chain_seq" <= ?
        order by "chain_seq" limit ?`,
      [organizationId, afterSeq, untilSeq, limit],
    );
    return rows.map(toChained);
  }

  /**
   * The chain positions a time window covers: from the first entry written at or after `since` to
   * the last written before `until`. An export is always a contiguous run of the chain.
   */
  async seqRange(
    organizationId: string,
    afterSeq: number,
    since: Date | null,
    until: Date | null,
  ): Promise<{ first: number; last: number } | null> {
    const [row] = await this.getEntityManager().execute<{ first: string | null; last: string | null }[]>(
      `select
         (select min("chain_seq") from "audit_entry" where "organization_id" = ? and "chain_seq" > ? and (?::timestamptz is null or "created_at" >= ?)) as "first",
         (select max("chain_seq") from "audit_entry" where "organization_id" = ? and "chain_seq" > ? and (?::timestamptz is null or "created_at" < ?)) as "last"`,
      [organizationId, afterSeq, since, since, organizationId, afterSeq, until, until],
    );
    if (!row || row.first === null || row.last === null || Number(row.first) > Number(row.last)) return null;
    return { first: Number(row.first), last: Number(row.last) };
  }

  /** The stored hash at a chain position (the link an export's first line continues from). */
  async hashAt(organizationId: string, seq: number): Promise<string | null> {
    const [row] = await this.getEntityManager().execute<{ hash: string | null }[]>(
      `select "hash" from "audit_entry" where "organization_id" = ? and "chain_seq" = ?`,
      [organizationId, seq],
    );
    return row?.hash ?? null;
  }

  /** Organizations holding entries written before `cutoff` (oldest first, a bounded batch). */
  async organizationsWithEntriesBefore(cutoff: Date, limit: number): Promise<string[]> {
    const rows = await this.getEntityManager().execute<{ organization_id: string }[]>(
      `select c."organization_id" from "audit_chain" c
        where exists (select 1 from "audit_entry" e
                       where e."organization_id" = c."organization_id" and e."chain_seq" = c."checkpoint_seq" + 1
                         and e."created_at" < ?)
        order by c."organization_id" limit ?`,
      [cutoff, limit],
    );
    return rows.map((row) => row.organization_id);
  }

  /**
   * Deletes the oldest entries of one organization written before `cutoff`, at most `limit`, in
   * chain order and without gaps, and moves the checkpoint to the last one deleted. Runs inside
   * the caller's transaction, holding the chain row so an append cannot interleave. Returns how
   * many entries were removed.
   */
  async pruneBefore(organizationId: string, cutoff: Date, limit: number): Promise<number> {
    const em = this.getEntityManager();
    const [chain] = await queryRows<{ checkpoint_seq: string }>(
      em,
      `select "checkpoint_seq" from "audit_chain" where "organization_id" = ? for update`,
      [organizationId],
    );
    if (!chain) return 0;
    // The prefix of the chain written before the cutoff: it stops at the first newer entry.
    const rows = await queryRows<{ chain_seq: string; hash: string; created_at: Date | string }>(
      em,
      `select "chain_seq", "hash", "created_at" from "audit_entry"
        where "organization_id" = ? and "chain_seq" > ? order by "chain_seq" limit ?`,
      [organizationId, chain.checkpoint_seq, limit],
    );
    let last: { chain_seq: string; hash: string } | null = null;
    for (const row of rows) {
      if (new Date(row.created_at).getTime() >= cutoff.getTime()) break;
      last = row;
    }
    if (!last) return 0;
    // Through the one function the immutability trigger lets delete: it moves the checkpoint too.
    const [result] = await queryRows<{ deleted: number }>(em, `select "audit_prune_chain"(?, ?) as "deleted"`, [
      organizationId,
      last.chain_seq,
    ]);
    return Number(result.deleted);
  }

  /** Entries of no organization (operator actions outside any) are in no chain: pruned by age alone. */
  async pruneUnchainedBefore(cutoff: Date, limit: number): Promise<number> {
    const [result] = await this.getEntityManager().execute<{ deleted: number }[]>(`select "audit_prune_unchained"(?, ?) as "deleted"`, [
      cutoff,
      limit,
    ]);
    return Number(result.deleted);
  }
}
