import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020000Whitelist extends Migration {
  up(): void {
    // One row per organization that ever touched its whitelist; no row means switched off.
    this.addSql(`
      create table "nft_whitelist" (
        "organization_id" uuid primary key references "organization" ("id") on delete cascade,
        "enabled" boolean not null default false,
        "updated_at" timestamptz(6) not null
      );`);
    // The primary key (organization_id, contract_address) serves both the read filter and the list.
    this.addSql(`
      create table "nft_whitelist_contract" (
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "contract_address" text not null check ("contract_address" ~ '^0x[0-9a-f]{40}$'),
        "created_at" timestamptz(6) not null,
        primary key ("organization_id", "contract_address")
      );`);
  }

  down(): void {
    this.addSql('drop table if exists "nft_whitelist_contract";');
    this.addSql('drop table if exists "nft_whitelist";');
  }
}
