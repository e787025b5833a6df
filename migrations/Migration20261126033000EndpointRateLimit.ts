import { Migration } from '@mikro-orm/migrations';

/** An endpoint's attempts per one-second window at most; null (every endpoint there is) is unlimited. */
export class Migration20261126033000EndpointRateLimit extends Migration {
  up(): void {
    this.addSql(`
      alter table "webhook_endpoint" add column "rate_limit_per_second" int null
        constraint "webhook_endpoint_rate_limit_per_second_check" check ("rate_limit_per_second" between 1 and 10000);`);
  }

  down(): void {
    this.addSql(`alter table "webhook_endpoint" drop column "rate_limit_per_second";`);
  }
}
