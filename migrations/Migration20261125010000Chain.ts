import { Migration } from '@mikro-orm/migrations';

export class Migration20261125010000Chain extends Migration {
  up(): void {}
}
