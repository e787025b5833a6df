import { tokenJoinSql } from '../tokens/token.view';
import { walletOfOrganizationSql } from '../wallets/wallet.view';
import { whitelistVisibleForSql } from '../whitelist/whitelist-filter';
import type { TransactionFields } from './dto/transaction.response.dto';
import type { TransactionType } from './transaction.rules';
import type { TransferCursor, TransferFilters } from './wallet-transfers.rules';

export interface WalletTransfersQuery extends TransferFilters {
  organizationId: string;
  walletId: string;
  /** Lowercase contract addresses; null or empty for every contract. */
  contractAddresses: string[] | null;
  /** An extra SQL condition on the token aliased `t` (trusted: built by the owner of what it reads). */
  tokenCondition: string | null;
  after: TransferCursor | null;
  limit: number;
}

/** A movement as the feed reads it: the fields of a transaction, its createdAt kept to the microsecond. */
export type TransferRow = TransactionFields;

const COLUMNS = `x."id", x."organization_id" as "organizationId", x."type", x."token_id" as "tokenId",
           x."from_wallet_id" as "fromWalletId", x."to_wallet_id" as "toWalletId", x."amount"::text as "amount",
           x."source", x."status", x."chain_id"::text as "chainId", x."block_number"::text as "blockNumber",
           x."block_hash" as "blockHash", x."transaction_hash" as "transactionHash", x."log_index" as "logIndex",
           x."batch_index" as "batchIndex", x."chain_from" as "chainFrom", x."chain_to" as "chainTo", x."created_at" as "at",
           to_char(x."created_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"') as "createdAtUtc"`;

/**
 * One page of a wallet's movements, newest first by (created_at, id), as ONE statement. A wallet
 * takes part in a movement as receiver or as sender: each side is its own index walk backwards
 * from the cursor ("nft_transaction_wallet_to_feed_index" / "..._from_feed_index"), cut at the
 * page size, and the two short walks are merged, so a page reads about two pages of rows whatever
 * the wallet's history. The sender side leaves out movements whose receiver is the wallet too
 * (they are on the receiver side). Filters, whitelist and token condition apply inside each walk,
 * so a page is full whenever more visible movements exist. The wallet row is the outer side of a
 * lateral join: an unknown (or another organization's) wallet yields no row at all.
 * Exported so that the benchmark's raw baseline runs exactly the service's SQL.
 */
export function walletTransfersSql(query: WalletTransfersQuery): { sql: string; params: unknown[] } {
  const side = (column: 'to_wallet_id' | 'from_wallet_id') => {
    const params: unknown[] = [query.walletId];
    const conditions = [`x."${column}" = ?::uuid`, `x."organization_id" = ?::uuid`];
    params.push(query.organizationId);
    if (column === 'from_wallet_id') {
      conditions.push(`x."to_wallet_id" is distinct from ?::uuid`);
      params.push(query.walletId);
    }
    if (query.after !== null) {
      conditions.push(`(x."created_at", x."id") < (?::timestamptz, ?::uuid)`);
      params.push(query.after.createdAt, query.after.id);
    }
    if (query.types !== null) {
      conditions.push(`x."type" = any(?::text[])`);
      params.push(query.types satisfies TransactionType[]);
    }
    if (query.chainId !== null) {
      conditions.push(`x."chain_id" = ?::bigint`);
      params.push(query.chainId);
    }
    if (query.since !== null) {
      conditions.push(`x."created_at" >= ?::timestamptz`);
      params.push(query.since);
    }
    if (query.until !== null) {
      conditions.push(`x."created_at" < ?::timestamptz`);
      params.push(query.until);
    }
    if (query.status !== null) {
      conditions.push(`x."status" = ?`);
      params.push(query.status);
    }
    if (query.contractAddresses !== null && query.contractAddresses.length > 0) {
      conditions.push(`t."contract_address" = any(?::text[])`);
      params.push(query.contractAddresses);
    }
    if (query.tokenCondition !== null) conditions.push(query.tokenCondition);
    conditions.push(WHITELIST);
    params.push(query.limit);
    const sql = `(select ${COLUMNS}
          from "nft_transaction" x
          ${TOKEN_JOIN}
         where ${conditions.join('\n           and ')}
         order by x."created_at" desc, x."id" desc
         limit ?)`;
    return { sql, params };
  };
  const received = side('to_wallet_id');
  const sent = side('from_wallet_id');
  // The wallet piece's two placeholders (wallet, organization) come first.
  const params = [query.walletId, query.organizationId, ...received.params, ...sent.params, query.limit];
  const sql = `select w."id" as "walletId", p.*
       from ${WALLET}
       left join lateral (
         select u.* from (${received.sql}
           union all
           ${sent.sql}) u
          order by u."at" desc, u."id" desc
          limit ?
       ) p on true
      order by p."at" desc, p."id" desc`;
  return { sql, params };
}

const WALLET = walletOfOrganizationSql('w');
const TOKEN_JOIN = tokenJoinSql('t', 'x."token_id"', 'x."organization_id"');
/** The whitelist rule keyed on the movement's organization (the wallet's). */
const WHITELIST = whitelistVisibleForSql('x."organization_id"', 't."contract_address"');

/** Reads back the rows of walletTransfersSql: null when the wallet is not the organization's. */
export function transferRowsFrom(rows: Record<string, unknown>[]): TransferRow[] | null {
  if (rows.length === 0) return null;
  return rows
    .filter((row) => row.id !== null)
    .map((row) => ({
      id: row.id as string,
      organizationId: row.organizationId as string,
      type: row.type as TransactionType,
      tokenId: row.tokenId as string,
      fromWalletId: (row.fromWalletId as string | null) ?? null,
      toWalletId: (row.toWalletId as string | null) ?? null,
      amount: row.amount as string,
      source: row.source as TransferRow['source'],
      status: row.status as TransferRow['status'],
      chainId: row.chainId === null ? null : Number(row.chainId),
      blockNumber: row.blockNumber === null ? null : Number(row.blockNumber),
      blockHash: (row.blockHash as string | null) ?? null,
      transactionHash: (row.transactionHash as string | null) ?? null,
      logIndex: (row.logIndex as number | null) ?? null,
      batchIndex: (row.batchIndex as number | null) ?? null,
      chainFrom: (row.chainFrom as string | null) ?? null,
      chainTo: (row.chainTo as string | null) ?? null,
      createdAtUtc: row.createdAtUtc as string,
    }));
}
