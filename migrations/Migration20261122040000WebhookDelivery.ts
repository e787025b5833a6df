import { Migration } from '@mikro-orm/migrations';

export class Migration20261122040000WebhookDelivery extends Migration {
  up(): void {
    // Set when the delivery worker has judged the event (delivery row created or nothing to send).
    this.addSql(`alter table "domain_event" add column "processed_at" timestamptz(6) null;`);
    this.addSql(`create index "domain_event_unprocessed_index" on "domain_event" ("created_at") where "processed_at" is null;`);

    // NOTIFY is delivered at commit only, so workers wake up exactly when an event becomes visible.
    this.addSql(`
      create or replace function "domain_event_notify"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('domain_event', '');
        return null;
      end $$;`);
    this.addSql(`
      create trigger "domain_event_notify" after insert on "domain_event"
      for each statement execute function "domain_event_notify"();`);

    this.addSql(`
      create table "webhook_delivery" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "webhook_type" text not null,
        "resource_type" text not null,
        "resource_id" uuid not null,
        "action" text not null,
        "payload" text not null,
        "event_created_at" timestamptz(6) not null,
        "status" text not null check ("status" in ('pending', 'succeeded', 'failed')),
        "attempt_count" int not null default 0,
        "cycle_start_attempt" int not null default 0,
        "last_attempt_at" timestamptz(6) null,
        "next_attempt_at" timestamptz(6) null,
        "last_response_status" int null,
        "succeeded_at" timestamptz(6) null
      );`);
    this.addSql(`create index "webhook_delivery_organization_id_index" on "webhook_delivery" ("organization_id", "id");`);
    this.addSql(`create index "webhook_delivery_organization_status_index" on "webhook_delivery" ("organization_id", "status", "id");`);
    this.addSql(`create index "webhook_delivery_due_index" on "webhook_delivery" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql(`create index "webhook_delivery_created_at_index" on "webhook_delivery" ("created_at");`);

    this.addSql(`
      create table "webhook_attempt" (
        "delivery_id" uuid not null references "webhook_delivery" ("id") on delete cascade,
        "attempt" int not null,
        "started_at" timestamptz(6) not null,
        "duration_ms" int not null,
        "response_status" int null,
        "error" text null,
        primary key ("delivery_id", "attempt")
      );`);
  }

  down(): void {
    this.addSql('drop table if exists "webhook_attempt";');
    this.addSql('drop table if exists "webhook_delivery";');
    this.addSql('drop trigger if exists "domain_event_notify" on "domain_event";');
    this.addSql('drop function if exists "domain_event_notify"();');
    this.addSql('drop index if exists "domain_event_unprocessed_index";');
    this.addSql('alter table "domain_event" drop column if exists "processed_at";');
  }
}
