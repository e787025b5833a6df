import { Migration } from '@mikro-orm/migrations';

export class Migration20261123120000Payments extends Migration {
  up(): void {
    this.addSql(`
      create table "payment" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "wallet_id" uuid not null references "wallet" ("id") on delete cascade,
        "amount" numeric(78, 0) not null check ("amount" >= 0),
        "reference" text null
      );`);
    this.addSql(`create index "payment_organization_id_id_index" on "payment" ("organization_id", "id");`);
  }

  down(): void {
    this.addSql('drop table if exists "payment";');
  }
}
