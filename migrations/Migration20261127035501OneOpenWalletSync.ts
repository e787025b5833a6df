import { Migration } from '@mikro-orm/migrations';

/**
 * One open wallet sync per wallet and chain (it was one per wallet, chain and start block): a
 * second start block for the same wallet and chain waits until the open one ends. Where a wallet
 * had several open on one chain, the oldest stays open and the others end as failed, their
 * reason in last_error, before the unique index is built. The turns the chains serve syncs in
 * read each organization's oldest open sync, so the queue's index now leads with the organization.
 */
export class Migration20261127035501OneOpenWalletSync extends Migration {
  up(): void {
    this.addSql(`
      update "wallet_sync" s set "status" = 'failed', "completed_at" = clock_timestamp(), "updated_at" = clock_timestamp(),
             "last_error" = 'ended: a wallet has one open sync per chain, and an older one was open'
       where s."status" in ('pending', 'running')
         and exists (
           select 1 from "wallet_sync" o
            where o."wallet_id" = s."wallet_id" and o."chain_id" = s."chain_id" and o."status" in ('pending', 'running')
              and (o."created_at", o."id") < (s."created_at", s."id")
         );`);
    this.addSql('drop index "wallet_sync_open_index";');
    this.addSql(`
      create unique index "wallet_sync_open_index" on "wallet_sync" ("wallet_id", "chain_id")
        where "status" in ('pending', 'running');`);
    this.addSql('drop index "wallet_sync_due_index";');
    this.addSql(`
      create index "wallet_sync_due_index" on "wallet_sync" ("chain_id", "organization_id", "created_at", "id")
        where "status" in ('pending', 'running');`);
    // The per-organization count every request makes.
    this.addSql(`
      create index "wallet_sync_organization_open_index" on "wallet_sync" ("organization_id")
        where "status" in ('pending', 'running');`);
  }

  down(): void {
    this.addSql('drop index "wallet_sync_organization_open_index";');
    this.addSql('drop index "wallet_sync_due_index";');
    this.addSql(`
      create index "wallet_sync_due_index" on "wallet_sync" ("chain_id", "created_at")
        where "status" in ('pending', 'running');`);
    this.addSql('drop index "wallet_sync_open_index";');
    this.addSql(`
      create unique index "wallet_sync_open_index" on "wallet_sync" ("wallet_id", "chain_id", "from_block")
        where "status" in ('pending', 'running');`);
  }
}
