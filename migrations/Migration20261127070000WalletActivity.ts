import { Migration } from '@mikro-orm/migrations';

/**
 * A wallet's activity feed (GET /v1/wallets/{id}/transfers) walks the movements of one wallet
 * newest first, as receiver and as sender: one index per side, in (created_at, id) order, so a
 * page is two short backward index walks from the cursor whatever the wallet's history. A
 * chain contract's tokens across organizations are found by one index too (a change of the
 * contract's spam classification is told to every organization holding one).
 */
export class Migration20261127070000WalletActivity extends Migration {
  up(): void {
    this.addSql(
      `create index if not exists "nft_transaction_wallet_to_feed_index" on "nft_transaction" ("to_wallet_id", "created_at", "id") where "to_wallet_id" is not null;`,
    );
    this.addSql(
      `create index if not exists "nft_transaction_wallet_from_feed_index" on "nft_transaction" ("from_wallet_id", "created_at", "id") where "from_wallet_id" is not null;`,
    );
    this.addSql(
      `create index if not exists "token_chain_contract_index" on "token" ("chain_id", "contract_address") where "chain_id" is not null;`,
    );
  }

  down(): void {
    this.addSql('drop index if exists "token_chain_contract_index";');
    this.addSql('drop index if exists "nft_transaction_wallet_from_feed_index";');
    this.addSql('drop index if exists "nft_transaction_wallet_to_feed_index";');
  }
}
