import { Migration } from '@mikro-orm/migrations';

/**
 * The chain module's own tables (docs/CHAIN.md "Following a chain"): where each chain's follower stands
 * and who holds it, the hashes of recently applied blocks (to notice a reorg), and the wallet
 * history replays asked for through the API.
 */
export class Migration20261125010000Chain extends Migration {
  up(): void {
    // One row per followed chain. The follower advances "applied_block" in the same transaction
    // as the movements it records, so the cursor and the ledger never disagree; it is null until
    // the node was first reached (the start block may be "the head then"). The lease makes one
    // follower per chain active across instances; a lapsed lease is taken over.
    this.addSql(`
      create table "chain_cursor" (
        "chain_id" bigint primary key check ("chain_id" > 0),
        "applied_block" bigint null check ("applied_block" >= -1),
        "applied_hash" text null,
        "applied_block_time" timestamptz(6) null,
        "head_block" bigint null check ("head_block" >= 0),
        "head_block_time" timestamptz(6) null,
        "lease_owner" text null,
        "lease_until" timestamptz(6) null,
        "last_error" text null,
        "last_error_at" timestamptz(6) null,
        "created_at" timestamptz(6) not null default now(),
        "updated_at" timestamptz(6) not null default now()
      );`);
    // Hashes of applied blocks still shallow enough to be replaced: the end of every applied
    // range and every block that held a movement. A reorg is found by comparing them with the
    // node's, and the deepest still-matching one is where the chains part.
    this.addSql(`
      create table "chain_block" (
        "chain_id" bigint not null,
        "block_number" bigint not null check ("block_number" >= 0),
        "block_hash" text not null,
        "block_time" timestamptz(6) null,
        primary key ("chain_id", "block_number")
      );`);
    // Replays of one wallet's history from a block (POST /v1/wallets/{walletId}/sync). The same
    // request while one is open answers that one: at most one open replay per wallet, chain and
    // start block.
    this.addSql(`
      create table "wallet_sync" (
        "id" uuid primary key,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "wallet_id" uuid not null references "wallet" ("id") on delete cascade,
        "chain_id" bigint not null check ("chain_id" > 0),
        "address" text not null,
        "from_block" bigint not null check ("from_block" >= 0),
        "to_block" bigint null,
        "next_block" bigint not null,
        "status" text not null default 'pending' check ("status" in ('pending', 'running', 'done', 'failed')),
        "recorded" int not null default 0,
        "last_error" text null,
        "lease_owner" text null,
        "lease_until" timestamptz(6) null,
        "created_at" timestamptz(6) not null default now(),
        "updated_at" timestamptz(6) not null default now(),
        "completed_at" timestamptz(6) null
      );`);
    this.addSql(`
      create unique index "wallet_sync_open_index" on "wallet_sync" ("wallet_id", "chain_id", "from_block")
        where "status" in ('pending', 'running');`);
    this.addSql(`
      create index "wallet_sync_due_index" on "wallet_sync" ("chain_id", "created_at")
        where "status" in ('pending', 'running');`);
  }

  down(): void {
    this.addSql('drop table if exists "wallet_sync";');
    this.addSql('drop table if exists "chain_block";');
    this.addSql('drop table if exists "chain_cursor";');
  }
}
