import { Migration } from '@mikro-orm/migrations';

export class Migration20261125000000ChainLedger extends Migration {
  up(): void {}
}
