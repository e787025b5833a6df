import { Migration } from '@mikro-orm/migrations';

/** uint256 decimal without leading zeros; the exact upper bound (2^256 - 1) is checked by the service. */
const UINT256_TEXT = `'^(0|[1-9][0-9]{0,77})$'`;
const ADDRESS_TEXT = `'^0x[0-9a-f]{40}$'`;

export class Migration20261122010000NftData extends Migration {
  up(): void {
    this.addSql(`
      create table "wallet" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "name" text null,
        "address" text null check ("address" ~ ${ADDRESS_TEXT})
      );`);
    // Serves the wallet list (keyset on id) and every lookup of one wallet within its organization.
    this.addSql(`create index "wallet_organization_id_id_index" on "wallet" ("organization_id", "id");`);

    this.addSql(`
      create table "token" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "contract_address" text not null check ("contract_address" ~ ${ADDRESS_TEXT}),
        "blockchain_token_id" text not null check ("blockchain_token_id" ~ ${UINT256_TEXT}),
        "name" text null,
        "description" text null,
        "image" text null,
        "animation_url" text null,
        "external_url" text null,
        "background_color" text null,
        "edition_id" bigint null check ("edition_id" >= 0),
        "total_edition" bigint null check ("total_edition" >= 0),
        "creator_name" text null,
        "creator_image_url" text null,
        "creator_external_page_url" text null,
        constraint "token_organization_contract_token_unique" unique ("organization_id", "contract_address", "blockchain_token_id")
      );`);
    this.addSql(`create index "token_organization_id_id_index" on "token" ("organization_id", "id");`);

    // Rows that reach zero stay (amount > 0 filters them); the partial index holds only held tokens,
    // in the order the balances page reads them.
    this.addSql(`
      create table "balance" (
        "wallet_id" uuid not null references "wallet" ("id") on delete cascade,
        "token_id" uuid not null references "token" ("id") on delete cascade,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "amount" numeric(78,0) not null check ("amount" >= 0),
        "updated_at" timestamptz(6) not null,
        primary key ("wallet_id", "token_id")
      );`);
    this.addSql(`create index "balance_wallet_held_index" on "balance" ("wallet_id", "token_id") include ("amount") where "amount" > 0;`);
    this.addSql(`create index "balance_token_id_index" on "balance" ("token_id");`);

    this.addSql(`
      create table "nft_transaction" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "type" text not null check ("type" in ('nftMint', 'nftTransfer', 'nftBurn')),
        "token_id" uuid not null references "token" ("id") on delete cascade,
        "from_wallet_id" uuid null references "wallet" ("id") on delete cascade,
        "to_wallet_id" uuid null references "wallet" ("id") on delete cascade,
        "amount" numeric(78,0) not null check ("amount" > 0),
        constraint "nft_transaction_parties_check" check (
          ("type" = 'nftMint' and "from_wallet_id" is null and "to_wallet_id" is not null)
          or ("type" = 'nftBurn' and "from_wallet_id" is not null and "to_wallet_id" is null)
          or ("type" = 'nftTransfer' and "from_wallet_id" is not null and "to_wallet_id" is not null and "from_wallet_id" <> "to_wallet_id")
        )
      );`);
    this.addSql(`create index "nft_transaction_organization_id_id_index" on "nft_transaction" ("organization_id", "id");`);

    // The key is claimed first, in the same transaction as the write it guards, so a concurrent
    // duplicate waits on the primary key and then sees the committed answer (never a null one).
    this.addSql(`
      create table "idempotency_key" (
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "scope" text not null,
        "key" text not null,
        "request_hash" text not null,
        "response_status" int null,
        "response_body" jsonb null,
        "created_at" timestamptz(6) not null,
        primary key ("organization_id", "scope", "key")
      );`);
    this.addSql(`create index "idempotency_key_created_at_index" on "idempotency_key" ("created_at");`);
  }

  down(): void {
    this.addSql('drop table if exists "idempotency_key";');
    this.addSql('drop table if exists "nft_transaction";');
    this.addSql('drop table if exists "balance";');
    this.addSql('drop table if exists "token";');
    this.addSql('drop table if exists "wallet";');
  }
}
