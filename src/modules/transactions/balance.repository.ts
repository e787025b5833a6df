import { EntityRepository } from '@mikro-orm/postgresql';
import { tokenColumnsSql, TokenView, tokenViewFromRow } from '../tokens/token.view';
import { whitelistVisibleForSql } from '../whitelist/whitelist-filter';
import type { Balance } from './balance.entity';

export interface HeldToken {
  tokenId: string;
  amount: string;
  token: TokenView;
}

export class BalanceRepository extends EntityRepository<Balance> {
  /**
   * One page of what a wallet holds, in ONE query whatever the page size: the wallet row is the
   * outer side of a lateral join, so an unknown (or another organization's) wallet yields no row
   * at all, and a known wallet with nothing held yields one row of nulls. Zero balances and tokens
   * hidden by the whitelist are filtered inside the query, so a page is full whenever more exist.
   * The whitelist rule is keyed on the wallet's organization (equal to the token's by the join), a
   * constant for the whole query, so PostgreSQL evaluates the switch once rather than per row.
   * Returns null when the wallet is not the organization's.
   */
  async walletPage(query: {
    organizationId: string;
    walletId: string;
    afterTokenId: string | null;
    contractAddresses: string[] | null;
    limit: number;
  }): Promise<HeldToken[] | null> {
    const params: unknown[] = [];
    const conditions: string[] = [];
    if (query.afterTokenId !== null) {
      conditions.push(`and b."token_id" > ?`);
      params.push(query.afterTokenId);
    }
    if (query.contractAddresses !== null && query.contractAddresses.length > 0) {
      conditions.push(`and t."contract_address" in (?)`);
      params.push(query.contractAddresses);
    }
    params.push(query.limit, query.walletId, query.organizationId);
    const rows = await this.getEntityManager().execute<Record<string, unknown>[]>(
      `select w."id" as "walletId", p.*
         from "wallet" w
         left join lateral (
           select b."token_id" as "tokenId", b."amount"::text as "amount", ${tokenColumnsSql('t', 'tk_')}
             from "balance" b
             join "token" t on t."id" = b."token_id" and t."organization_id" = w."organization_id"
            where b."wallet_id" = w."id"
              and b."amount" > 0
              ${conditions.join('\n              ')}
              and ${whitelistVisibleForSql('w."organization_id"', 't."contract_address"')}
            order by b."token_id"
            limit ?
         ) p on true
        where w."id" = ? and w."organization_id" = ?
        order by p."tokenId"`,
      params,
    );
    if (rows.length === 0) return null;
    return rows
      .filter((row) => row.tokenId !== null)
      .map((row) => ({ tokenId: row.tokenId as string, amount: row.amount as string, token: tokenViewFromRow(row, 'tk_') }));
  }
}
