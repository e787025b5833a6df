import { Migration } from '@mikro-orm/migrations';

/**
 * What each receiver chooses to get (docs/WEBHOOKS.md "Choosing what an endpoint receives"): the
 * body kind, a content filter and a retry schedule of its own. Endpoint health also keeps the run
 * of consecutive failed attempts, so `operational` `failing` is sent once at the fifth and
 * `recovered` at the first success after it.
 */
export class Migration20261127110000ReceiverChoices extends Migration {
  up(): void {
    this.addSql(`
      alter table "webhook_endpoint"
        add column "payload" text not null default 'thin' check ("payload" in ('thin', 'full')),
        add column "filter" jsonb null,
        add column "retry_schedule" int[] null;`);
    this.addSql(`
      alter table "webhook_endpoint_health"
        add column "consecutive_failures" int not null default 0,
        add column "failing" boolean not null default false,
        add column "failing_changed_at" timestamptz(6) null;`);
  }

  down(): void {
    this.addSql(
      `alter table "webhook_endpoint_health" drop column "consecutive_failures", drop column "failing", drop column "failing_changed_at";`,
    );
    this.addSql(`alter table "webhook_endpoint" drop column "payload", drop column "filter", drop column "retry_schedule";`);
  }
}
