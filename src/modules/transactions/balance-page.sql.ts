import { tokenColumnsSql, tokenJoinSql, TokenView, tokenViewFromRow } from '../tokens/token.view';
import { walletOfOrganizationSql } from '../wallets/wallet.view';
import { whitelistVisibleForSql } from '../whitelist/whitelist-filter';
import { spamFilterSql, type SpamFilter } from '../spam/spam-filter';

/**
 * The balances page as SQL. The wallet, the token and the whitelist are other modules' tables:
 * each is read here through the SQL piece its owner exports (the wallet row, the token join and
 * columns, the whitelist rule), so a page stays one statement while each table's SQL stays with
 * its owner.
 */

export interface HeldToken {
  tokenId: string;
  amount: string;
  token: TokenView;
}

export interface WalletPageQuery {
  organizationId: string;
  walletId: string;
  afterTokenId: string | null;
  contractAddresses: string[] | null;
  /** The `spam` filter; include or absent filters nothing. */
  spam?: SpamFilter;
  limit: number;
}

/** The page's contract filter on the token `t` (empty without one); its values go to `params`. */
function contractCondition(contractAddresses: string[] | null, params: unknown[]): string {
  if (contractAddresses === null || contractAddresses.length === 0) return '';
  params.push(...contractAddresses);
  return `and t."contract_address" in (${contractAddresses.map(() => '?').join(', ')})`;
}

/** The page's spam filter on the token `t`, as the wallet's organization sees it (empty for include). */
function spamCondition(filter: SpamFilter | undefined): string {
  const condition = spamFilterSql(filter, 't', 'w."organization_id"');
  return condition === null ? '' : `and ${condition}`;
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
 * Exported so that the benchmark's raw baseline runs exactly the service's SQL.
 */
export function walletPageSql(query: WalletPageQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [query.walletId, query.organizationId];
  const conditions: string[] = [];
  if (query.afterTokenId !== null) {
    conditions.push(`and b."token_id" > ?`);
    params.push(query.afterTokenId);
  }
  conditions.push(contractCondition(query.contractAddresses, params));
  conditions.push(spamCondition(query.spam));
  params.push(query.limit);
  const sql = `select w."id" as "walletId", p.*
       from ${WALLET}
       left join lateral (
         select b."token_id" as "tokenId", b."amount"::text as "amount", ${TOKEN_COLUMNS}
           from "balance" b
           ${tokenJoinSql('t', 'b."token_id"', 'b."organization_id"')}
          where b."wallet_id" = w."id"
            and b."amount" > 0
            ${conditions.join('\n            ')}
            and ${WALLET_WHITELIST}
          order by b."token_id"
          limit ?
       ) p on true
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
  const params: unknown[] = [query.walletId, query.organizationId, query.walletId, query.asOf];
  let after = '';
  if (query.afterTokenId !== null) {
    after = `and x."token_id" > ?`;
    params.push(query.afterTokenId);
  }
  params.push(query.walletId, query.asOf, query.walletId, query.asOf, query.walletId, query.asOf);
  const conditions = [contractCondition(query.contractAddresses, params), spamCondition(query.spam)];
  params.push(query.limit);
  const sql = `select w."id" as "walletId", p.*
       from ${WALLET}
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
           ${tokenJoinSql('t', 'r."token_id"', 'w."organization_id"')}
          where r."token_id" is not null
            and s."amount" > 0
            ${conditions.join('\n            ')}
            and ${WALLET_WHITELIST}
          limit ?
       ) p on true
      order by p."tokenId"`;
  return { sql, params };
}

const WALLET = walletOfOrganizationSql('w');
const TOKEN_COLUMNS = tokenColumnsSql('t', 'tk_');
const WALLET_WHITELIST = whitelistVisibleForSql('w."organization_id"', 't."contract_address"');

/** Reads back the rows of walletPageSql: null when the wallet is not the organization's. */
export function heldTokensFromRows(rows: Record<string, unknown>[]): HeldToken[] | null {
  if (rows.length === 0) return null;
  return rows
    .filter((row) => row.tokenId !== null)
    .map((row) => ({ tokenId: row.tokenId as string, amount: row.amount as string, token: tokenViewFromRow(row, 'tk_') }));
}
