import { Migration } from '@mikro-orm/migrations';

/**
 * The whole-contract index (README.md "Whole-contract index"), owned by the contract-index module:
 * the registered contracts with their indexing cursor and lease (`indexed_contract`), the block
 * hashes and times the indexer kept (`indexed_contract_block`, for reorgs and `asOf`), every
 * transfer (`indexed_contract_transfer`), the current balance of each (holder, token)
 * (`indexed_contract_balance`), each holder's totals after every block that changed them
 * (`indexed_contract_holder_change`) and full holder lists at checkpoint blocks
 * (`indexed_contract_checkpoint`): holders at a past block are a checkpoint plus the changes
 * after it, so a page never sums the whole history.
 *
 * Only the registration references the organization; the large tables carry the contract id
 * without a foreign key (bulk inserts skip the check) and are emptied by the module when a
 * contract is deleted.
 */
export class Migration20261127073000ContractIndex extends Migration {
  up(): void {
    this.addSql(`
      create table "indexed_contract" (
        "id" uuid primary key,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "chain_id" bigint not null,
        "address" text not null,
        "from_block" bigint not null check ("from_block" >= 0),
        "standard" text null check ("standard" in ('erc721', 'erc1155')),
        "standard_known" boolean not null default false,
        "status" text not null default 'backfilling' check ("status" in ('backfilling', 'live')),
        "indexed_block" bigint not null,
        "indexed_hash" text null,
        "from_block_time" timestamptz(6) null,
        "checkpoint_changes" integer not null default 0,
        "checkpoint_size" integer not null default 0,
        "lease_owner" text null,
        "lease_until" timestamptz(6) null,
        "last_error" text null,
        "created_at" timestamptz(6) not null default clock_timestamp(),
        constraint "indexed_contract_unique" unique ("organization_id", "chain_id", "address")
      );`);
    this.addSql(`create index "indexed_contract_chain_index" on "indexed_contract" ("chain_id");`);
    this.addSql(`create index "indexed_contract_page_index" on "indexed_contract" ("organization_id", "id");`);
    this.addSql(`
      create table "indexed_contract_block" (
        "contract_id" uuid not null,
        "block_number" bigint not null,
        "block_hash" text not null,
        "block_time" timestamptz(6) not null,
        primary key ("contract_id", "block_number")
      );`);
    this.addSql(`create index "indexed_contract_block_time_index" on "indexed_contract_block" ("contract_id", "block_time");`);
    // batch_index is -1 for Transfer and TransferSingle: a primary key column cannot be null.
    this.addSql(`
      create table "indexed_contract_transfer" (
        "contract_id" uuid not null,
        "block_number" bigint not null,
        "log_index" integer not null,
        "batch_index" integer not null,
        "block_hash" text not null,
        "transaction_hash" text not null,
        "from_address" text not null,
        "to_address" text not null,
        "token_id" numeric(78, 0) not null,
        "amount" numeric(78, 0) not null,
        primary key ("contract_id", "block_number", "log_index", "batch_index")
      );`);
    this.addSql(
      `create index "indexed_contract_transfer_token_index" on "indexed_contract_transfer" ("contract_id", "token_id", "block_number");`,
    );
    // Sums start at fromBlock, so a holder may have sent more of a token than the index saw arrive: amounts may be negative.
    this.addSql(`
      create table "indexed_contract_balance" (
        "contract_id" uuid not null,
        "holder" text collate "C" not null,
        "token_id" numeric(78, 0) not null,
        "amount" numeric not null,
        primary key ("contract_id", "holder", "token_id")
      );`);
    this.addSql(`
      create table "indexed_contract_holder_change" (
        "contract_id" uuid not null,
        "block_number" bigint not null,
        "holder" text collate "C" not null,
        "token_count" integer not null,
        "amount" numeric not null,
        primary key ("contract_id", "block_number", "holder")
      );`);
    this.addSql(`
      create table "indexed_contract_checkpoint" (
        "contract_id" uuid not null,
        "block_number" bigint not null,
        "holder" text collate "C" not null,
        "token_count" integer not null,
        "amount" numeric not null,
        primary key ("contract_id", "block_number", "holder")
      );`);
    // The holders page walks a checkpoint in answer order.
    this.addSql(
      `create index "indexed_contract_checkpoint_order_index" on "indexed_contract_checkpoint" ("contract_id", "block_number", "amount" desc, "holder");`,
    );
  }

  down(): void {
    this.addSql('drop table "indexed_contract_checkpoint";');
    this.addSql('drop table "indexed_contract_holder_change";');
    this.addSql('drop table "indexed_contract_balance";');
    this.addSql('drop table "indexed_contract_transfer";');
    this.addSql('drop table "indexed_contract_block";');
    this.addSql('drop table "indexed_contract";');
  }
}
