import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger's side of following EVM chains (docs/CHAIN.md "Following a chain"): tokens know the chain
 * they live on and the state of their fetched metadata, transactions know where they come from
 * and whether a reorg reverted them, and wallets are found by address.
 */
export class Migration20261125000000ChainLedger extends Migration {
  up(): void {
    // Tokens: a chain token is keyed by its chain as well; API tokens keep chain_id null, and
    // NULLS NOT DISTINCT keeps them unique among themselves exactly as before.
    this.addSql(`
      alter table "token"
        add column "chain_id" bigint null check ("chain_id" > 0),
        add column "chain_standard" text null check ("chain_standard" in ('erc721', 'erc1155')),
        add column "metadata_status" text not null default 'ok' check ("metadata_status" in ('pending', 'ok', 'failed')),
        add column "metadata_error" text null,
        add column "metadata_attempts" int not null default 0 check ("metadata_attempts" >= 0),
        add column "metadata_next_attempt_at" timestamptz(6) null,
        add constraint "token_chain_pairing_check" check (("chain_id" is null) = ("chain_standard" is null));`);
    this.addSql(`alter table "token" drop constraint "token_organization_contract_token_unique";`);
    this.addSql(`
      alter table "token" add constraint "token_organization_chain_contract_token_unique"
        unique nulls not distinct ("organization_id", "chain_id", "contract_address", "blockchain_token_id");`);
    // The metadata worker claims due pending tokens; only those few rows are in the index.
    this.addSql(`
      create index "token_metadata_due_index" on "token" ("metadata_next_attempt_at" nulls first, "id")
        where "metadata_status" = 'pending';`);

    // Transactions: two new types (one side outside the organization) and the chain's coordinates.
    this.addSql(`
      alter table "nft_transaction"
        drop constraint "nft_transaction_type_check",
        drop constraint "nft_transaction_parties_check",
        add column "source" text not null default 'api' check ("source" in ('api', 'chain')),
        add column "status" text not null default 'confirmed' check ("status" in ('confirmed', 'reverted')),
        add column "chain_id" bigint null,
        add column "block_number" bigint null check ("block_number" >= 0),
        add column "block_hash" text null,
        add column "transaction_hash" text null,
        add column "log_index" int null check ("log_index" >= 0),
        add column "batch_index" int null check ("batch_index" >= 0),
        add column "chain_from" text null,
        add column "chain_to" text null,
        add constraint "nft_transaction_type_check"
          check ("type" in ('nftMint', 'nftTransfer', 'nftBurn', 'nftDeposit', 'nftWithdrawal')),
        add constraint "nft_transaction_parties_check" check (
          ("type" = 'nftMint' and "from_wallet_id" is null and "to_wallet_id" is not null)
          or ("type" = 'nftBurn' and "from_wallet_id" is not null and "to_wallet_id" is null)
          or ("type" = 'nftTransfer' and "from_wallet_id" is not null and "to_wallet_id" is not null and "from_wallet_id" <> "to_wallet_id")
          or ("type" = 'nftDeposit' and "from_wallet_id" is null and "to_wallet_id" is not null)
          or ("type" = 'nftWithdrawal' and "from_wallet_id" is not null and "to_wallet_id" is null)
        ),
        add constraint "nft_transaction_origin_check" check (
          ("source" = 'api' and "status" = 'confirmed' and "chain_id" is null and "type" in ('nftMint', 'nftTransfer', 'nftBurn'))
          or ("source" = 'chain' and "chain_id" is not null and "block_number" is not null and "block_hash" is not null
              and "transaction_hash" is not null and "log_index" is not null and "chain_from" is not null and "chain_to" is not null)
        );`);
    // Exactly once per (organization, chain, transaction, log, batch position) among confirmed
    // rows: the follower inserts ON CONFLICT DO NOTHING on this index, so a replayed range records
    // nothing twice; a reverted row leaves the key free for the canonical chain's copy.
    this.addSql(`
      create unique index "nft_transaction_chain_once_index" on "nft_transaction"
        ("organization_id", "chain_id", "transaction_hash", "log_index", coalesce("batch_index", -1))
        where "chain_id" is not null and "status" = 'confirmed';`);
    // A reorg reverts every confirmed movement of a chain from a block on, newest first.
    this.addSql(`
      create index "nft_transaction_chain_block_index" on "nft_transaction" ("chain_id", "block_number")
        where "status" = 'confirmed' and "chain_id" is not null;`);
    // Balances at a past time: a wallet's confirmed movements on each side, in token order then
    // time, with the amount, so a page is a merge of two index-only range scans that stops once
    // the page is full (created_at is the block time for chain rows).
    this.addSql(`
      create index "nft_transaction_as_of_to_index" on "nft_transaction" ("to_wallet_id", "token_id", "created_at")
        include ("amount") where "status" = 'confirmed' and "to_wallet_id" is not null;`);
    this.addSql(`
      create index "nft_transaction_as_of_from_index" on "nft_transaction" ("from_wallet_id", "token_id", "created_at")
        include ("amount") where "status" = 'confirmed' and "from_wallet_id" is not null;`);

    // Followers match movements against every watched address, across organizations.
    this.addSql(`create index "wallet_address_index" on "wallet" ("address") where "address" is not null;`);
  }

  down(): void {
    this.addSql('drop index if exists "wallet_address_index";');
    this.addSql('drop index if exists "nft_transaction_as_of_from_index";');
    this.addSql('drop index if exists "nft_transaction_as_of_to_index";');
    this.addSql('drop index if exists "nft_transaction_chain_block_index";');
    this.addSql('drop index if exists "nft_transaction_chain_once_index";');
    this.addSql(`delete from "nft_transaction" where "source" = 'chain';`);
    this.addSql(`
      alter table "nft_transaction"
        drop constraint "nft_transaction_origin_check",
        drop constraint "nft_transaction_parties_check",
        drop constraint "nft_transaction_type_check",
        drop column "source", drop column "status", drop column "chain_id", drop column "block_number",
        drop column "block_hash", drop column "transaction_hash", drop column "log_index", drop column "batch_index",
        drop column "chain_from", drop column "chain_to",
        add constraint "nft_transaction_type_check" check ("type" in ('nftMint', 'nftTransfer', 'nftBurn')),
        add constraint "nft_transaction_parties_check" check (
          ("type" = 'nftMint' and "from_wallet_id" is null and "to_wallet_id" is not null)
          or ("type" = 'nftBurn' and "from_wallet_id" is not null and "to_wallet_id" is null)
          or ("type" = 'nftTransfer' and "from_wallet_id" is not null and "to_wallet_id" is not null and "from_wallet_id" <> "to_wallet_id")
        );`);
    this.addSql('drop index if exists "token_metadata_due_index";');
    this.addSql(`delete from "token" where "chain_id" is not null;`);
    this.addSql(`alter table "token" drop constraint "token_organization_chain_contract_token_unique";`);
    this.addSql(`
      alter table "token"
        drop constraint "token_chain_pairing_check",
        drop column "chain_id", drop column "chain_standard", drop column "metadata_status", drop column "metadata_error",
        drop column "metadata_attempts", drop column "metadata_next_attempt_at",
        add constraint "token_organization_contract_token_unique" unique ("organization_id", "contract_address", "blockchain_token_id");`);
  }
}
