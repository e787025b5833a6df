import { EntityRepository } from '@mikro-orm/postgresql';
import type { Token } from './token.entity';
import { tokenColumnsSql, TokenView, tokenViewFromRow, tokenVisibleSql } from './token.view';

export class TokenRepository extends EntityRepository<Token> {
  findInOrganization(organizationId: string, id: string): Promise<Token | null> {
    return this.findOne({ organizationId, id });
  }

  /** The token as a read shows it: null when unknown, another organization's, or hidden by the whitelist. */
  async findVisible(organizationId: string, id: string): Promise<TokenView | null> {
    const rows = await this.getEntityManager().execute<Record<string, unknown>[]>(
      `select ${tokenColumnsSql('t', 'tk_')}
         from "token" t
        where t."organization_id" = ? and t."id" = ? and ${tokenVisibleSql('t')}`,
      [organizationId, id],
    );
    return rows.length === 0 ? null : tokenViewFromRow(rows[0], 'tk_');
  }
}
