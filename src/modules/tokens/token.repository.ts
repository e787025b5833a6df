import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { EntityRepository } from '@mikro-orm/postgresql';
import type { Token } from './token.entity';
import { tokenColumnsSql, TokenView, tokenViewFromRow, tokenVisibleSql } from './token.view';

/**
 * The token read of GET /v1/tokens/{id} with `?` placeholders (organization id, token id).
 * Exported so that the benchmark's raw baseline runs exactly the service's SQL.
 */
export const VISIBLE_TOKEN_SQL = `select ${tokenColumnsSql('t', 'tk_')}
         from "token" t
        where t."organization_id" = ? and t."id" = ? and ${tokenVisibleSql('t')}`;

export interface ExistingToken {
  contractAddress: string;
  chainId: number | null;
}

export class TokenRepository extends EntityRepository<Token> {
  /**
   * Which of `ids` are tokens of the organization, each with its contract address (events carry
   * it for endpoint filters) and its chain (null for API tokens): one plain statement, no
   * entities loaded.
   */
  async existingIds(organizationId: string, ids: string[]): Promise<Map<string, ExistingToken>> {
    const rows = await queryRows<{ id: string; contract_address: string; chain_id: string | null }>(
      this.getEntityManager(),
      'select "id", "contract_address", "chain_id" from "token" where "organization_id" = ? and "id" = any(?::uuid[])',
      [organizationId, ids],
    );
    return new Map(
      rows.map((row) => [row.id, { contractAddress: row.contract_address, chainId: row.chain_id === null ? null : Number(row.chain_id) }]),
    );
  }

  /** The contract address of each of `ids` that exists, whatever its organization: one plain statement. */
  async contractAddresses(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await queryRows<{ id: string; contract_address: string }>(
      this.getEntityManager(),
      'select "id", "contract_address" from "token" where "id" = any(?::uuid[])',
      [ids],
    );
    return new Map(rows.map((row) => [row.id, row.contract_address]));
  }

  findInOrganization(organizationId: string, id: string): Promise<Token | null> {
    return this.findOne({ organizationId, id });
  }

  /** The token as a read shows it: null when unknown, another organization's, or hidden by the whitelist. */
  /** Tokens of the organization as the API shows them, whitelisted or not (full webhook bodies are not hidden). */
  async viewsByIds(organizationId: string, ids: readonly string[]): Promise<TokenView[]> {
    const rows = await queryRows(
      outsideTransaction(this.getEntityManager()),
      `select ${tokenColumnsSql('t', 'tk_')} from "token" t where t."organization_id" = ? and t."id" = any(?::uuid[])`,
      [organizationId, [...ids]],
    );
    return rows.map((row) => tokenViewFromRow(row, 'tk_'));
  }

  async findVisible(organizationId: string, id: string): Promise<TokenView | null> {
    const rows = await queryRows(outsideTransaction(this.getEntityManager()), VISIBLE_TOKEN_SQL, [organizationId, id]);
    return rows.length === 0 ? null : tokenViewFromRow(rows[0], 'tk_');
  }
}
