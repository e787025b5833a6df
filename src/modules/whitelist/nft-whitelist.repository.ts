import { EntityRepository } from '@mikro-orm/postgresql';
import type { NftWhitelist } from './nft-whitelist.entity';
import { execute, queryRows } from '../../database/raw-sql';

export class NftWhitelistRepository extends EntityRepository<NftWhitelist> {
  async isEnabled(organizationId: string): Promise<boolean> {
    const row = await this.findOne({ organizationId });
    return row?.enabled ?? false;
  }

  /**
   * Makes sure the organization's row exists and locks it until the transaction ends. Every
   * change to one organization's whitelist takes this lock first, so the size limit is checked
   * against a count no concurrent request can change. Call inside a transaction.
   */
  async lockForChange(organizationId: string): Promise<{ enabled: boolean }> {
    await execute(
      this.em,
      `insert into "nft_whitelist" ("organization_id", "enabled", "updated_at") values (?, false, now())
       on conflict ("organization_id") do nothing`,
      [organizationId],
    );
    const [row] = await queryRows<{ enabled: boolean }>(
      this.em,
      'select "enabled" from "nft_whitelist" where "organization_id" = ? for update',
      [organizationId],
    );
    return { enabled: row.enabled };
  }

  async setEnabled(organizationId: string, enabled: boolean): Promise<void> {
    await execute(this.em, 'update "nft_whitelist" set "enabled" = ?, "updated_at" = now() where "organization_id" = ?', [
      enabled,
      organizationId,
    ]);
  }
}
