import { EntityManager, EntityRepository } from '@mikro-orm/postgresql';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { UINT256_MAX } from '../tokens/uint256';
import { tokenColumnsSql, TokenView, tokenViewFromRow } from '../tokens/token.view';
import { whitelistVisibleForSql } from '../whitelist/whitelist-filter';
import type { Balance } from './balance.entity';
import { spamFilterSql, type SpamFilter } from '../spam/spam-filter';

export interface HeldToken {
  tokenId: string;
  amount: string;
  token: TokenView;
}

export interface BalanceChange {
  walletId: string;
  tokenId: string;
  delta: bigint;
}

export class BalanceRepository extends EntityRepository<Balance> {
  /**
   * Locks the balance rows of `pairs` (keys `walletId/tokenId`) in ONE statement that walks them
   * in (wallet, token) order: a missing row is created, an existing one updated in place. Every row
   * a batch touches is thus locked before it changes anything, in the same global order single
   * movements lock in, so a batch and a single movement cannot deadlock, and an in-memory replay
   * of the batch over the amounts is exact until commit. Rows in `credits` (only ever credited by
   * the batch) get their credit in the same statement, unless it would pass 2^256-1; the others
   * are locked unchanged. Returns the amounts before this statement; a row whose credit was
   * refused reports its locked amount, so the replay finds the overflowing movement.
   * Wallets and tokens must exist (foreign keys). Runs on `em`'s transaction.
   */
  async lockRows(
    em: EntityManager,
    organizationId: string,
    pairs: string[],
    credits: ReadonlyMap<string, bigint>,
  ): Promise<Map<string, bigint>> {
    if (pairs.length === 0) return new Map();
    const sorted = [...pairs].sort();
    const split = (key: string) => [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    const rows = await queryRows<{ wallet_id: string; token_id: string; amount: string }>(
      em,
      `insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
       select p."wallet_id", p."token_id", ?, p."credit", now()
         from unnest(?::uuid[], ?::uuid[], ?::numeric[]) with ordinality as p("wallet_id", "token_id", "credit", "n")
        order by p."n"
       on conflict ("wallet_id", "token_id") do update
         set "amount" = "balance"."amount" + excluded."amount",
             "updated_at" = case when excluded."amount" = 0 then "balance"."updated_at" else excluded."updated_at" end
         where "balance"."amount" + excluded."amount" <= ?::numeric
       returning "wallet_id", "token_id", "amount"::text as "amount"`,
      [
        organizationId,
        sorted.map((key) => split(key)[0]),
        sorted.map((key) => split(key)[1]),
        sorted.map((key) => (credits.get(key) ?? 0n).toString()),
        UINT256_MAX.toString(),
      ],
    );
    const before = new Map(
      rows.map((row) => [`${row.wallet_id}/${row.token_id}`, BigInt(row.amount) - (credits.get(`${row.wallet_id}/${row.token_id}`) ?? 0n)]),
    );
    const refused = sorted.filter((key) => !before.has(key));
    if (refused.length > 0) {
      // ON CONFLICT ... WHERE locks the row even when it refuses the update.
      const current = await queryRows<{ wallet_id: string; token_id: string; amount: string }>(
        em,
        `select b."wallet_id", b."token_id", b."amount"::text as "amount"
           from "balance" b join unnest(?::uuid[], ?::uuid[]) as p("wallet_id", "token_id")
             on b."wallet_id" = p."wallet_id" and b."token_id" = p."token_id"`,
        [refused.map((key) => split(key)[0]), refused.map((key) => split(key)[1])],
      );
      for (const row of current) before.set(`${row.wallet_id}/${row.token_id}`, BigInt(row.amount));
    }
    return before;
  }

  /** Adds each delta to its row, all rows locked beforehand by lockRows, in one statement. */
  async applyChanges(em: EntityManager, changes: BalanceChange[]): Promise<void> {
    if (changes.length === 0) return;
    await queryRows(
      em,
      `update "balance" b set "amount" = b."amount" + c."delta", "updated_at" = now()
         from unnest(?::uuid[], ?::uuid[], ?::numeric[]) as c("wallet_id", "token_id", "delta")
        where b."wallet_id" = c."wallet_id" and b."token_id" = c."token_id"`,
      [changes.map((c) => c.walletId), changes.map((c) => c.tokenId), changes.map((c) => c.delta.toString())],
    );
  }

  /**
   * One page of what a wallet holds, in ONE query whatever the page size: the wallet row is the
   * outer side of a lateral join, so an unknown (or another organization's) wallet yields no row
   * at all, and a known wallet with nothing held yields one row of nulls. Zero balances and tokens
   * hidden by the whitelist are filtered inside the query, so a page is full whenever more exist.
   * The whitelist rule is keyed on the wallet's organization (equal to the token's by the join), a
   * constant for the whole query, so PostgreSQL evaluates the switch once rather than per row.
   * The token is joined by primary key and the balance row's organization, never the wallet's:
   * with `t.organization_id = w.organization_id` the planner may merge-join against every token
   * of the organization in id order, which costs as much as the organization is large (see
   * bench/results/whitelist-explain.txt), instead of one index probe per balance read.
   * Returns null when the wallet is not the organization's.
   */
  async walletPage(query: WalletPageQuery): Promise<HeldToken[] | null> {
    const { sql, params } = walletPageSql(query);
    return heldTokensFromRows(await queryRows(outsideTransaction(this.getEntityManager()), sql, params));
  }

  /** One page of what a wallet held at `query.asOf`, read from the movement ledger (see walletPageAsOfSql). */
  async walletPageAsOf(query: WalletPageQuery & { asOf: string }): Promise<HeldToken[] | null> {
    const { sql, params } = walletPageAsOfSql(query);
    return heldTokensFromRows(await queryRows(outsideTransaction(this.getEntityManager()), sql, params));
  }
}

export interface WalletPageQuery {
  organizationId: string;
  walletId: string;
  afterTokenId: string | null;
  contractAddresses: string[] | null;
  /** The `spam` filter (README.md "Spam"); include or absent filters nothing. */
  spam?: SpamFilter;
  limit: number;
}

/**
 * The balances page as one statement with `?` placeholders, one per value.
 * Exported so that the benchmark's raw baseline runs exactly the service's SQL.
 */
export function walletPageSql(query: WalletPageQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  if (query.afterTokenId !== null) {
    conditions.push(`and b."token_id" > ?`);
    params.push(query.afterTokenId);
  }
  if (query.contractAddresses !== null && query.contractAddresses.length > 0) {
    conditions.push(`and t."contract_address" in (${query.contractAddresses.map(() => '?').join(', ')})`);
    params.push(...query.contractAddresses);
  }
  const spam = spamFilterSql(query.spam, 't', 'w."organization_id"');
  if (spam !== null) conditions.push(`and ${spam}`);
  params.push(query.limit, query.walletId, query.organizationId);
  const sql = `select w."id" as "walletId", p.*
       from "wallet" w
       left join lateral (
         select b."token_id" as "tokenId", b."amount"::text as "amount", ${TOKEN_COLUMNS}
           from "balance" b
           join "token" t on t."id" = b."token_id" and t."organization_id" = b."organization_id"
          where b."wallet_id" = w."id"
            and b."amount" > 0
            ${conditions.join('\n            ')}
            and ${WALLET_WHITELIST}
          order by b."token_id"
          limit ?
       ) p on true
      where w."id" = ? and w."organization_id" = ?
      order by p."tokenId"`;
  return { sql, params };
}

/**
 * The balances page at a past instant, as one statement, from the movement ledger: confirmed
 * movements up to `asOf` (API movements by their creation time, chain movements by block time:
 * both are created_at). The tokens the wallet received by then are walked in token order, one index
 * probe each (a recursive "loose index scan" over the as-of index of credits, pulled only as far
 * as the page needs), and each one's holding is two index-only sums over its few movements on
 * either side. A page thus reads the movements of the tokens it shows (and of those it skips as
 * not held or hidden), never the wallet's whole history. Same shape, keyset, filters and
 * whitelist as walletPageSql. The walk yields tokens in ascending order and the page is cut
 * without re-sorting it (a sort would read the whole walk); the outer ORDER BY sorts the page.
 */
export function walletPageAsOfSql(query: WalletPageQuery & { asOf: string }): { sql: string; params: unknown[] } {
  const params: unknown[] = [query.walletId, query.asOf];
  let after = '';
  if (query.afterTokenId !== null) {
    after = `and x."token_id" > ?`;
    params.push(query.afterTokenId);
  }
  params.push(query.walletId, query.asOf, query.walletId, query.asOf, query.walletId, query.asOf);
  const conditions: string[] = [];
  if (query.contractAddresses !== null && query.contractAddresses.length > 0) {
    conditions.push(`and t."contract_address" in (${query.contractAddresses.map(() => '?').join(', ')})`);
    params.push(...query.contractAddresses);
  }
  const spam = spamFilterSql(query.spam, 't', 'w."organization_id"');
  if (spam !== null) conditions.push(`and ${spam}`);
  params.push(query.limit, query.walletId, query.organizationId);
  const sql = `select w."id" as "walletId", p.*
       from "wallet" w
       left join lateral (
         with recursive "received" ("token_id") as (
           (select x."token_id" from "nft_transaction" x
             where x."to_wallet_id" = ?::uuid and x."status" = 'confirmed' and x."created_at" <= ?::timestamptz ${after}
             order by x."token_id" limit 1)
           union all
           select (select x."token_id" from "nft_transaction" x
                    where x."to_wallet_id" = ?::uuid and x."status" = 'confirmed' and x."created_at" <= ?::timestamptz
                      and x."token_id" > r."token_id"
                    order by x."token_id" limit 1)
             from "received" r
            where r."token_id" is not null
         )
         select r."token_id" as "tokenId", s."amount"::text as "amount", ${TOKEN_COLUMNS}
           from "received" r
           cross join lateral (
             select coalesce((select sum(x."amount") from "nft_transaction" x
                               where x."to_wallet_id" = ?::uuid and x."token_id" = r."token_id" and x."status" = 'confirmed'
                                 and x."created_at" <= ?::timestamptz), 0)
                  - coalesce((select sum(x."amount") from "nft_transaction" x
                               where x."from_wallet_id" = ?::uuid and x."token_id" = r."token_id" and x."status" = 'confirmed'
                                 and x."created_at" <= ?::timestamptz), 0) as "amount"
           ) s
           join "token" t on t."id" = r."token_id"
          where r."token_id" is not null
            and s."amount" > 0
            and t."organization_id" = w."organization_id"
            ${conditions.join('\n            ')}
            and ${WALLET_WHITELIST}
          limit ?
       ) p on true
      where w."id" = ? and w."organization_id" = ?
      order by p."tokenId"`;
  return { sql, params };
}

const TOKEN_COLUMNS = tokenColumnsSql('t', 'tk_');
const WALLET_WHITELIST = whitelistVisibleForSql('w."organization_id"', 't."contract_address"');

/** Reads back the rows of walletPageSql: null when the wallet is not the organization's. */
export function heldTokensFromRows(rows: Record<string, unknown>[]): HeldToken[] | null {
  if (rows.length === 0) return null;
  return rows
    .filter((row) => row.tokenId !== null)
    .map((row) => ({ tokenId: row.tokenId as string, amount: row.amount as string, token: tokenViewFromRow(row, 'tk_') }));
}
