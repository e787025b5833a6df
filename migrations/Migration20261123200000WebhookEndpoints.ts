import { Migration } from '@mikro-orm/migrations';

export class Migration20261123200000WebhookEndpoints extends Migration {
  up(): void {
    // Endpoints beside the organization's default one (the `/webhook-config` row, whose
    // endpoint id is the organization's id). Secrets are sealed with the organization id as
    // context, like the default's, and rotate the same way.
    this.addSql(`
      create table "webhook_endpoint" (
        "id" uuid not null primary key,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "url" text not null,
        "description" text null,
        "enabled" boolean not null,
        "webhook_types" text[] not null,
        "contract_addresses" text[] null,
        "shared_secret_sealed" text not null,
        "previous_shared_secret_sealed" text null,
        "previous_secret_expires_at" timestamptz(6) null,
        "disabled_reason" text null,
        "created_at" timestamptz(6) not null,
        "updated_at" timestamptz(6) not null,
        constraint "webhook_endpoint_previous_secret_pair"
          check (("previous_shared_secret_sealed" is null) = ("previous_secret_expires_at" is null))
      );`);
    this.addSql(`create index "webhook_endpoint_organization_index" on "webhook_endpoint" ("organization_id", "id");`);
    this.addSql(`
      create index "webhook_endpoint_previous_secret_expiry" on "webhook_endpoint" ("previous_secret_expires_at")
        where "previous_secret_expires_at" is not null;`);
    // Why an endpoint was switched off by the service itself ("failing"); cleared by a PATCH.
    this.addSql(`alter table "webhook_config" add column "disabled_reason" text null;`);

    // The contract an event's token belongs to (lowercase), so endpoint filters are judged
    // without reading the token; null for events about no token.
    this.addSql(`alter table "domain_event" add column "contract_address" text null;`);

    // A webhook is now one event sent to one endpoint. Existing webhooks were all the default
    // endpoint's, and their id was their event's id: history is kept as it was.
    this.addSql(`alter table "webhook_delivery" add column "event_id" uuid null, add column "endpoint_id" uuid null;`);
    this.addSql(`update "webhook_delivery" set "event_id" = "id", "endpoint_id" = "organization_id";`);
    this.addSql(`alter table "webhook_delivery" alter column "event_id" set not null, alter column "endpoint_id" set not null;`);
    this.addSql(`create index "webhook_delivery_endpoint_index" on "webhook_delivery" ("organization_id", "endpoint_id", "id");`);

    // Each endpoint's current run of failures, kept by the delivery worker with its results, so
    // auto-disable is judged without scanning the delivery log.
    this.addSql(`
      create table "webhook_endpoint_health" (
        "endpoint_id" uuid not null primary key,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "failing_since" timestamptz(6) null,
        "failed_webhooks" int not null default 0,
        "last_success_at" timestamptz(6) null
      );`);
    this.addSql(
      `create index "webhook_endpoint_health_failing_index" on "webhook_endpoint_health" ("failing_since") where "failing_since" is not null;`,
    );
  }

  down(): void {
    this.addSql('drop table if exists "webhook_endpoint_health";');
    this.addSql('drop index if exists "webhook_delivery_endpoint_index";');
    this.addSql('alter table "webhook_delivery" drop column if exists "event_id", drop column if exists "endpoint_id";');
    this.addSql('alter table "domain_event" drop column if exists "contract_address";');
    this.addSql('alter table "webhook_config" drop column if exists "disabled_reason";');
    this.addSql('drop table if exists "webhook_endpoint";');
  }
}
