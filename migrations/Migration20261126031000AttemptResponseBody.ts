import { Migration } from '@mikro-orm/migrations';

/**
 * Each attempt keeps the start of what the receiver answered. Added on the partitioned parent,
 * which adds it to every day partition and to those made later.
 */
export class Migration20261126031000AttemptResponseBody extends Migration {
  up(): void {
    this.addSql(`alter table "webhook_attempt" add column "response_body" text null;`);
  }

  down(): void {
    this.addSql(`alter table "webhook_attempt" drop column "response_body";`);
  }
}
