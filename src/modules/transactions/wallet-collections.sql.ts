import {
  contractProfileColumnSql,
  contractProfileFromColumn,
  spamColumnSql,
  spamFilterSql,
  spamViewFromColumn,
  type SpamFilter,
} from '../spam/spam-filter';
import type { SpamView } from '../spam/spam.rules';
import type { ChainStandard } from '../tokens/token.entity';
import { tokenJoinSql } from '../tokens/token.view';
import { walletOfOrganizationSql } from '../wallets/wallet.view';
import { whitelistVisibleForSql } from '../whitelist/whitelist-filter';

export interface WalletCollectionsQuery {
  organizationId: string;
  walletId: string;
  /** Holdings at this instant (a timestamptz literal) instead of now. */
  asOf: string | null;
  spam?: SpamFilter;
  /** The last collection served: (lowercase contract, chain id or -1 for API tokens). */
  after: { contractAddress: string; chainKey: number } | null;
  limit: number;
}

/** One (chain, contract) of a wallet's holdings. */
export interface CollectionRow {
  chainId: number | null;
  contractAddress: string;
  name: string | null;
  symbol: string | null;
  standard: ChainStandard | null;
  tokenCount: number;
  totalAmount: string;
  spam: SpamView | null;
}

/**
 * One page of a wallet's holdings grouped by (chain, contract), as ONE statement: the held
 * tokens exactly as the balances read lists them (amount above zero, whitelist, spam filter; with
 * `asOf`, the confirmed movements up to that instant), grouped, ordered by contract then chain
 * (API tokens, chain -1, first), cut after the cursor. Each group's name/symbol and spam are read
 * by one index probe each. The wallet row is the outer side of a lateral join: an unknown wallet
 * yields no row at all.
 */
export function walletCollectionsSql(query: WalletCollectionsQuery): { sql: string; params: unknown[] } {
  // The wallet piece's two placeholders (wallet, organization) come first.
  const params: unknown[] = [query.walletId, query.organizationId];
  let held: string;
  if (query.asOf === null) {
    held = `select b."token_id", b."amount" from "balance" b where b."wallet_id" = w."id" and b."amount" > 0`;
  } else {
    held = `select x."token_id", sum(case when x."to_wallet_id" = w."id" then x."amount" else -x."amount" end) as "amount"
              from "nft_transaction" x
             where (x."to_wallet_id" = w."id" or x."from_wallet_id" = w."id") and x."status" = 'confirmed'
               and x."created_at" <= ?::timestamptz
             group by x."token_id"
            having sum(case when x."to_wallet_id" = w."id" then x."amount" else -x."amount" end) > 0`;
    params.push(query.asOf);
  }
  const conditions = [WHITELIST];
  const spam = spamFilterSql(query.spam, 't', 'w."organization_id"');
  if (spam !== null) conditions.push(spam);
  let after = '';
  if (query.after !== null) {
    after = `where (g."contract_address", g."chain_key") > (?, ?::bigint)`;
    params.push(query.after.contractAddress, query.after.chainKey);
  }
  params.push(query.limit);
  const sql = `select w."id" as "walletId", p."contract_address" as "contractAddress", p."chain_id"::text as "chainId",
            p."chain_key"::text as "chainKey", p."standard", p."token_count"::text as "tokenCount", p."total_amount"::text as "totalAmount",
            ${contractProfileColumnSql('p."chain_id"', 'p."contract_address"')} as "profile",
            ${spamColumnSql('w."organization_id"', 'p."chain_id"', 'p."contract_address"')} as "spam"
       from ${WALLET}
       left join lateral (
         select g.* from (
           select t."contract_address", t."chain_id", coalesce(t."chain_id", -1) as "chain_key", max(t."chain_standard") as "standard",
                  count(*) as "token_count", sum(h."amount") as "total_amount"
             from (${held}) h
             ${TOKEN_JOIN}
            where ${conditions.join('\n              and ')}
            group by t."contract_address", t."chain_id"
         ) g
         ${after}
         order by g."contract_address", g."chain_key"
         limit ?
       ) p on true
      order by p."contract_address", p."chain_key"`;
  return { sql, params };
}

const WALLET = walletOfOrganizationSql('w');
const TOKEN_JOIN = tokenJoinSql('t', 'h."token_id"', 'w."organization_id"');
const WHITELIST = whitelistVisibleForSql('w."organization_id"', 't."contract_address"');

/** Reads back the rows of walletCollectionsSql: null when the wallet is not the organization's. */
export function collectionRowsFrom(rows: Record<string, unknown>[]): (CollectionRow & { chainKey: number })[] | null {
  if (rows.length === 0) return null;
  return rows
    .filter((row) => row.contractAddress !== null)
    .map((row) => {
      const chainId = row.chainId === null ? null : Number(row.chainId);
      const profile = chainId === null ? { name: null, symbol: null } : contractProfileFromColumn(row.profile);
      return {
        chainId,
        chainKey: Number(row.chainKey),
        contractAddress: row.contractAddress as string,
        name: profile.name,
        symbol: profile.symbol,
        standard: chainId === null ? null : ((row.standard as ChainStandard | null) ?? null),
        tokenCount: Number(row.tokenCount),
        totalAmount: row.totalAmount as string,
        spam: chainId === null ? null : spamViewFromColumn(row.spam),
      };
    });
}
