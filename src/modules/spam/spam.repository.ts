import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import type { RuleHits, SpamRule } from './spam.rules';

/** One thing waiting to be judged: a chain transaction's receipt, or a contract whose token metadata fired a rule. */
export interface DueJudgement {
  id: string;
  chainId: number;
  kind: 'transaction' | SpamRule;
  /** The transaction hash, or the contract address (both lowercase). */
  subject: string;
  attempts: number;
}

export interface SpamOverrideRow {
  chainId: number;
  contractAddress: string;
  isSpam: boolean;
}

/** The spam module's tables (spam_contract, spam_override, chain_contract, spam_judgement), in plain SQL. */
@Injectable()
export class SpamRepository {
  constructor(private readonly em: EntityManager) {}

  /** Queues chain transactions for judging, once each (a queued one stays queued), on the caller's transaction. */
  async enqueue(em: EntityManager, items: { chainId: number; kind: DueJudgement['kind']; subject: string }[]): Promise<void> {
    if (items.length === 0) return;
    await queryRows(
      em,
      `insert into "spam_judgement" ("chain_id", "kind", "subject")
       select * from unnest(?::bigint[], ?::text[], ?::text[])
       on conflict ("chain_id", "kind", "subject") do nothing`,
      [items.map((i) => i.chainId), items.map((i) => i.kind), items.map((i) => i.subject.toLowerCase())],
    );
  }

  /**
   * Claims up to `limit` due judgements for `leaseMs` (any number of workers: a claimed row is
   * skipped by the others; one whose worker died is due again when its lease ends).
   */
  async claimDue(limit: number, leaseMs: number): Promise<DueJudgement[]> {
    const rows = await queryRows<{ id: string; chain_id: string; kind: DueJudgement['kind']; subject: string; attempts: number }>(
      outsideTransaction(this.em),
      `update "spam_judgement" j set "due_at" = clock_timestamp() + make_interval(secs => ?::double precision / 1000), "attempts" = j."attempts" + 1
        where j."id" in (select d."id" from "spam_judgement" d where d."due_at" <= clock_timestamp()
                          order by d."due_at" limit ? for update skip locked)
       returning j."id"::text as "id", j."chain_id"::text as "chain_id", j."kind", j."subject", j."attempts"`,
      [leaseMs, limit],
    );
    return rows.map((r) => ({ id: r.id, chainId: Number(r.chain_id), kind: r.kind, subject: r.subject, attempts: r.attempts }));
  }

  async complete(em: EntityManager, id: string): Promise<void> {
    await queryRows(em, `delete from "spam_judgement" where "id" = ?::bigint`, [id]);
  }

  async retryAt(id: string, dueAt: Date): Promise<void> {
    await queryRows(outsideTransaction(this.em), `update "spam_judgement" set "due_at" = ? where "id" = ?::bigint`, [dueAt, id]);
  }

  /**
   * Records a contract's first classification with `hits`: true when this call created it, false
   * when the contract was judged before (then nothing is written).
   */
  async classifyFirst(em: EntityManager, chainId: number, contractAddress: string, hits: RuleHits): Promise<boolean> {
    const rows = await queryRows(
      em,
      `insert into "spam_contract" ("chain_id", "contract_address", "mass_airdrop", "lure_metadata") values (?, ?, ?, ?)
       on conflict ("chain_id", "contract_address") do nothing returning 1`,
      [chainId, contractAddress, hits.massAirdrop, hits.lureMetadata],
    );
    return rows.length > 0;
  }

  /** The contract's rule hits, its row locked until the caller's transaction ends; null when never judged. */
  async lockHits(em: EntityManager, chainId: number, contractAddress: string): Promise<RuleHits | null> {
    const [row] = await queryRows<{ mass_airdrop: boolean; lure_metadata: boolean }>(
      em,
      `select "mass_airdrop", "lure_metadata" from "spam_contract" where "chain_id" = ? and "contract_address" = ? for update`,
      [chainId, contractAddress],
    );
    return row ? { massAirdrop: row.mass_airdrop, lureMetadata: row.lure_metadata } : null;
  }

  async hits(em: EntityManager, chainId: number, contractAddress: string): Promise<RuleHits | null> {
    const [row] = await queryRows<{ mass_airdrop: boolean; lure_metadata: boolean }>(
      em,
      `select "mass_airdrop", "lure_metadata" from "spam_contract" where "chain_id" = ? and "contract_address" = ?`,
      [chainId, contractAddress],
    );
    return row ? { massAirdrop: row.mass_airdrop, lureMetadata: row.lure_metadata } : null;
  }

  async updateHits(em: EntityManager, chainId: number, contractAddress: string, hits: RuleHits): Promise<void> {
    await queryRows(
      em,
      `update "spam_contract" set "mass_airdrop" = ?, "lure_metadata" = ?, "updated_at" = clock_timestamp()
        where "chain_id" = ? and "contract_address" = ?`,
      [hits.massAirdrop, hits.lureMetadata, chainId, contractAddress],
    );
  }

  /** Every organization's override of the contract. */
  async overridesOf(em: EntityManager, chainId: number, contractAddress: string): Promise<Map<string, boolean>> {
    const rows = await queryRows<{ organization_id: string; is_spam: boolean }>(
      em,
      `select "organization_id", "is_spam" from "spam_override" where "chain_id" = ? and "contract_address" = ?`,
      [chainId, contractAddress],
    );
    return new Map(rows.map((r) => [r.organization_id, r.is_spam]));
  }

  /** The organization's override, its row locked until the caller's transaction ends; null when none. */
  async lockOverride(em: EntityManager, organizationId: string, chainId: number, contractAddress: string): Promise<boolean | null> {
    const [row] = await queryRows<{ is_spam: boolean }>(
      em,
      `select "is_spam" from "spam_override" where "organization_id" = ? and "chain_id" = ? and "contract_address" = ? for update`,
      [organizationId, chainId, contractAddress],
    );
    return row ? row.is_spam : null;
  }

  async putOverride(em: EntityManager, organizationId: string, row: SpamOverrideRow): Promise<void> {
    await queryRows(
      em,
      `insert into "spam_override" ("organization_id", "chain_id", "contract_address", "is_spam") values (?, ?, ?, ?)
       on conflict ("organization_id", "chain_id", "contract_address")
       do update set "is_spam" = excluded."is_spam", "updated_at" = clock_timestamp()`,
      [organizationId, row.chainId, row.contractAddress, row.isSpam],
    );
  }

  async deleteOverride(em: EntityManager, organizationId: string, chainId: number, contractAddress: string): Promise<boolean> {
    const rows = await queryRows(
      em,
      `delete from "spam_override" where "organization_id" = ? and "chain_id" = ? and "contract_address" = ? returning 1`,
      [organizationId, chainId, contractAddress],
    );
    return rows.length > 0;
  }

  /** One page of the organization's overrides in (chainId, contractAddress) order, after the cursor. */
  async overridePage(
    organizationId: string,
    after: { chainId: number; contractAddress: string } | null,
    limit: number,
  ): Promise<SpamOverrideRow[]> {
    const rows = await queryRows<{ chain_id: string; contract_address: string; is_spam: boolean }>(
      outsideTransaction(this.em),
      `select "chain_id"::text as "chain_id", "contract_address", "is_spam" from "spam_override"
        where "organization_id" = ? ${after === null ? '' : 'and ("chain_id", "contract_address") > (?::bigint, ?)'}
        order by "chain_id", "contract_address" limit ?`,
      after === null ? [organizationId, limit] : [organizationId, after.chainId, after.contractAddress, limit],
    );
    return rows.map((r) => ({ chainId: Number(r.chain_id), contractAddress: r.contract_address, isSpam: r.is_spam }));
  }

  /** Rule hits and the organization's overrides of `keys`, in one statement. */
  async statesOf(
    organizationId: string,
    keys: { chainId: number; contractAddress: string }[],
  ): Promise<{ chainId: number; contractAddress: string; hits: RuleHits | null; override: boolean | null }[]> {
    if (keys.length === 0) return [];
    const rows = await queryRows<{
      chain_id: string;
      contract_address: string;
      mass_airdrop: boolean | null;
      lure_metadata: boolean | null;
      is_spam: boolean | null;
    }>(
      outsideTransaction(this.em),
      `select k."chain_id"::text as "chain_id", k."contract_address", sc."mass_airdrop", sc."lure_metadata", so."is_spam"
         from unnest(?::bigint[], ?::text[]) as k("chain_id", "contract_address")
         left join "spam_contract" sc on sc."chain_id" = k."chain_id" and sc."contract_address" = k."contract_address"
         left join "spam_override" so on so."organization_id" = ? and so."chain_id" = k."chain_id" and so."contract_address" = k."contract_address"`,
      [keys.map((k) => k.chainId), keys.map((k) => k.contractAddress), organizationId],
    );
    return rows.map((r) => ({
      chainId: Number(r.chain_id),
      contractAddress: r.contract_address,
      hits: r.mass_airdrop === null ? null : { massAirdrop: r.mass_airdrop, lureMetadata: r.lure_metadata === true },
      override: r.is_spam,
    }));
  }

  /** Which of these contracts have their name and symbol read already. */
  async knownProfiles(chainId: number, contractAddresses: string[]): Promise<Set<string>> {
    const rows = await queryRows<{ contract_address: string }>(
      outsideTransaction(this.em),
      `select "contract_address" from "chain_contract" where "chain_id" = ? and "contract_address" = any(?::text[])`,
      [chainId, contractAddresses],
    );
    return new Set(rows.map((r) => r.contract_address));
  }

  async recordProfile(chainId: number, contractAddress: string, name: string | null, symbol: string | null): Promise<void> {
    await queryRows(
      outsideTransaction(this.em),
      `insert into "chain_contract" ("chain_id", "contract_address", "name", "symbol") values (?, ?, ?, ?)
       on conflict ("chain_id", "contract_address") do nothing`,
      [chainId, contractAddress, name, symbol],
    );
  }
}
