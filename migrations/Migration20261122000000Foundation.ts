import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000Foundation extends Migration {
  up(): void {
    this.addSql(`
      create table "organization" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "name" text not null
      );`);
    this.addSql(`
      create table "api_key" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "name" text not null,
        "roles" text[] not null,
        "key_hash" text not null,
        "key_prefix" text not null,
        "revoked_at" timestamptz(6) null,
        constraint "api_key_roles_check" check ("roles" <@ array['read','write','admin']::text[] and cardinality("roles") > 0)
      );`);
    this.addSql(`create unique index "api_key_key_hash_unique" on "api_key" ("key_hash");`);
    this.addSql(`create index "api_key_organization_id_id_index" on "api_key" ("organization_id", "id");`);
    this.addSql(`
      create table "audit_entry" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid null references "organization" ("id") on delete cascade,
        "action" text not null,
        "api_key_id" uuid null,
        "key_prefix" text null,
        "request_id" text null,
        "ip" text null,
        "changes" jsonb not null
      );`);
    this.addSql(`create index "audit_entry_organization_id_id_index" on "audit_entry" ("organization_id", "id");`);
  }

  down(): void {
    this.addSql('drop table if exists "audit_entry";');
    this.addSql('drop table if exists "api_key";');
    this.addSql('drop table if exists "organization";');
  }
}
