import { Migration } from '@mikro-orm/migrations';

/**
 * Spam classification (docs/API.md "Activity, collections and spam"), owned by the spam module: the rules that fired per
 * (chain, contract) (`spam_contract`, its absence meaning not judged yet), each organization's
 * overrides, what the contract says of itself (`chain_contract`: name() and symbol(), read once),
 * and the queue of chain transactions and token metadata waiting to be judged.
 */
export class Migration20261127070100Spam extends Migration {
  up(): void {
    this.addSql(`
      create table "spam_contract" (
        "chain_id" bigint not null,
        "contract_address" text not null,
        "mass_airdrop" boolean not null default false,
        "lure_metadata" boolean not null default false,
        "classified_at" timestamptz(6) not null default clock_timestamp(),
        "updated_at" timestamptz(6) not null default clock_timestamp(),
        primary key ("chain_id", "contract_address")
      );`);
    this.addSql(`
      create table "spam_override" (
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "chain_id" bigint not null,
        "contract_address" text not null,
        "is_spam" boolean not null,
        "updated_at" timestamptz(6) not null default clock_timestamp(),
        primary key ("organization_id", "chain_id", "contract_address")
      );`);
    this.addSql(`
      create table "chain_contract" (
        "chain_id" bigint not null,
        "contract_address" text not null,
        "name" text null,
        "symbol" text null,
        "read_at" timestamptz(6) not null default clock_timestamp(),
        primary key ("chain_id", "contract_address")
      );`);
    // One row per thing to judge: a chain transaction (its whole receipt), or a contract whose
    // token metadata fired lureMetadata. Claimed with a lease; a row is deleted once judged.
    this.addSql(`
      create table "spam_judgement" (
        "id" bigint generated always as identity primary key,
        "chain_id" bigint not null,
        "kind" text not null check ("kind" in ('transaction', 'lureMetadata')),
        "subject" text not null,
        "attempts" integer not null default 0,
        "due_at" timestamptz(6) not null default clock_timestamp(),
        constraint "spam_judgement_once" unique ("chain_id", "kind", "subject")
      );`);
    this.addSql(`create index "spam_judgement_due_index" on "spam_judgement" ("due_at");`);
  }

  down(): void {
    this.addSql('drop table "spam_judgement";');
    this.addSql('drop table "chain_contract";');
    this.addSql('drop table "spam_override";');
    this.addSql('drop table "spam_contract";');
  }
}
