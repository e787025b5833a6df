import { Migration } from '@mikro-orm/migrations';

/**
 * Token metadata is fetched fairly (docs/CHAIN.md "Following a chain"): the fetcher takes due tokens
 * organization by organization and contract by contract, and a contract whose documents keep
 * timing out is paused by its circuit breaker.
 */
export class Migration20261127040449MetadataFairness extends Migration {
  up(): void {
    // The claim walks the organizations that have pending chain tokens (a skip scan on the first
    // column) and reads each one's due tokens in order: those never tried (no next attempt), then
    // those due by time. It replaces the single queue's index.
    this.addSql('drop index if exists "token_metadata_due_index";');
    this.addSql(`
      create index "token_metadata_claim_index" on "token" ("organization_id", "metadata_next_attempt_at", "id")
        where "metadata_status" = 'pending' and "chain_id" is not null;`);
    // A breaker that opens puts off every pending token of its contract, whatever the organization.
    this.addSql(`
      create index "token_metadata_contract_index" on "token" ("chain_id", "contract_address")
        where "metadata_status" = 'pending';`);
    // The chain module's circuit breakers, one row per contract whose documents failed to answer
    // since they last did. Shared by every process that fetches metadata.
    this.addSql(`
      create table "metadata_breaker" (
        "chain_id" bigint not null check ("chain_id" > 0),
        "contract_address" text not null,
        "failures" int not null check ("failures" >= 0),
        "opened_at" timestamptz(6) null,
        "open_until" timestamptz(6) null,
        "trial_until" timestamptz(6) null,
        "updated_at" timestamptz(6) not null default now(),
        primary key ("chain_id", "contract_address")
      );`);
  }

  down(): void {
    this.addSql('drop table if exists "metadata_breaker";');
    this.addSql('drop index if exists "token_metadata_contract_index";');
    this.addSql('drop index if exists "token_metadata_claim_index";');
    this.addSql(`
      create index "token_metadata_due_index" on "token" ("metadata_next_attempt_at" nulls first, "id")
        where "metadata_status" = 'pending';`);
  }
}
