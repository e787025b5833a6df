import { Migration } from '@mikro-orm/migrations';

export class Migration20261125020000OneEndpointTable extends Migration {
  up(): void {
    // One table for every endpoint: the default one becomes a webhook_endpoint row flagged
    // is_default, whose id is the organization's (as it always was in the API and the delivery log).
    // Only the default may lack a url or a secret, and only while it is disabled.
    this.addSql(`
      alter table "webhook_endpoint"
        add column "is_default" boolean not null default false,
        alter column "url" drop not null,
        alter column "shared_secret_sealed" drop not null,
        add constraint "webhook_endpoint_default_is_the_organization" check (not "is_default" or "id" = "organization_id"),
        add constraint "webhook_endpoint_others_are_complete"
          check ("is_default" or ("url" is not null and "shared_secret_sealed" is not null)),
        add constraint "webhook_endpoint_enabled_is_complete"
          check (not "enabled" or ("url" is not null and "shared_secret_sealed" is not null));`);
    this.addSql(`create unique index "webhook_endpoint_one_default" on "webhook_endpoint" ("organization_id") where "is_default";`);
    // Existing installations: each configuration row becomes its organization's default endpoint,
    // created when the organization was (as the API always showed it).
    this.addSql(`
      insert into "webhook_endpoint" ("id", "organization_id", "is_default", "url", "description", "enabled", "webhook_types",
          "contract_addresses", "shared_secret_sealed", "previous_shared_secret_sealed", "previous_secret_expires_at",
          "disabled_reason", "created_at", "updated_at")
        select c."organization_id", c."organization_id", true, c."url", null, c."enabled", c."webhook_types", null,
               c."shared_secret_sealed", c."previous_shared_secret_sealed", c."previous_secret_expires_at", c."disabled_reason",
               o."created_at", c."updated_at"
          from "webhook_config" c join "organization" o on o."id" = c."organization_id";`);
    this.addSql(`drop table "webhook_config";`);
    // The delivery log filters by type on the server (GET …/webhooks?webhookType=…), newest first.
    this.addSql(`create index "webhook_delivery_type_index" on "webhook_delivery" ("organization_id", "webhook_type", "id");`);
  }

  down(): void {
    this.addSql(`drop index if exists "webhook_delivery_type_index";`);
    this.addSql(`
      create table "webhook_config" (
        "organization_id" uuid primary key references "organization" ("id") on delete cascade,
        "url" text null,
        "enabled" boolean not null default false,
        "webhook_types" text[] not null default '{}',
        "shared_secret_sealed" text null,
        "updated_at" timestamptz(6) not null,
        "previous_shared_secret_sealed" text null,
        "previous_secret_expires_at" timestamptz(6) null,
        "disabled_reason" text null,
        constraint "webhook_config_enabled_is_complete"
          check (not "enabled" or ("url" is not null and "shared_secret_sealed" is not null)),
        constraint "webhook_config_previous_secret_pair"
          check (("previous_shared_secret_sealed" is null) = ("previous_secret_expires_at" is null))
      );`);
    this.addSql(`
      create index "webhook_config_previous_secret_expiry" on "webhook_config" ("previous_secret_expires_at")
        where "previous_secret_expires_at" is not null;`);
    this.addSql(`
      insert into "webhook_config" ("organization_id", "url", "enabled", "webhook_types", "shared_secret_sealed", "updated_at",
          "previous_shared_secret_sealed", "previous_secret_expires_at", "disabled_reason")
        select "organization_id", "url", "enabled", "webhook_types", "shared_secret_sealed", "updated_at",
               "previous_shared_secret_sealed", "previous_secret_expires_at", "disabled_reason"
          from "webhook_endpoint" where "is_default";`);
    this.addSql(`delete from "webhook_endpoint" where "is_default";`);
    this.addSql(`drop index if exists "webhook_endpoint_one_default";`);
    this.addSql(`
      alter table "webhook_endpoint"
        drop constraint "webhook_endpoint_default_is_the_organization",
        drop constraint "webhook_endpoint_others_are_complete",
        drop constraint "webhook_endpoint_enabled_is_complete",
        alter column "url" set not null,
        alter column "shared_secret_sealed" set not null,
        drop column "is_default";`);
  }
}
