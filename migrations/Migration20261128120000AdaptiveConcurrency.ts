import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint's `maxInFlight` (null: the service's WEBHOOK_PER_RECEIVER_CONCURRENCY), the ceiling
 * of its adaptive in-flight limit; and each attempt's limit when it started, for the delivery log.
 */
export class Migration20261128120000AdaptiveConcurrency extends Migration {
  up(): void {
    this.addSql(`
      alter table "webhook_endpoint" add column "max_in_flight" int null
        constraint "webhook_endpoint_max_in_flight_check" check ("max_in_flight" between 1 and 1000);`);
    this.addSql(`alter table "webhook_attempt" add column "in_flight_limit" int null;`);
  }

  down(): void {
    this.addSql(`alter table "webhook_attempt" drop column "in_flight_limit";`);
    this.addSql(`alter table "webhook_endpoint" drop column "max_in_flight";`);
  }
}
