import { Migration } from '@mikro-orm/migrations';

/**
 * Endpoints that publish to a message broker (docs/WEBHOOKS.md "Destinations beyond HTTP"): an
 * endpoint has either a url or a destination, never both. The destination's user and password are
 * sealed apart, like the other secrets; the destination itself holds the url without them.
 */
export class Migration20261128090000BrokerDestinations extends Migration {
  up(): void {
    this.addSql(`
      alter table "webhook_endpoint"
        add column "destination" jsonb null,
        add column "destination_credentials_sealed" text null,
        drop constraint "webhook_endpoint_others_are_complete",
        drop constraint "webhook_endpoint_enabled_is_complete",
        add constraint "webhook_endpoint_url_or_destination" check ("url" is null or "destination" is null),
        add constraint "webhook_endpoint_destination_credentials"
          check ("destination_credentials_sealed" is null or "destination" is not null),
        add constraint "webhook_endpoint_others_are_complete"
          check ("is_default" or (("url" is not null or "destination" is not null) and "shared_secret_sealed" is not null)),
        add constraint "webhook_endpoint_enabled_is_complete"
          check (not "enabled" or (("url" is not null or "destination" is not null) and "shared_secret_sealed" is not null));`);
  }

  down(): void {
    this.addSql(`delete from "webhook_endpoint" where "destination" is not null and not "is_default";`);
    this.addSql(`
      alter table "webhook_endpoint"
        drop constraint "webhook_endpoint_url_or_destination",
        drop constraint "webhook_endpoint_destination_credentials",
        drop constraint "webhook_endpoint_others_are_complete",
        drop constraint "webhook_endpoint_enabled_is_complete",
        drop column "destination",
        drop column "destination_credentials_sealed",
        add constraint "webhook_endpoint_others_are_complete"
          check ("is_default" or ("url" is not null and "shared_secret_sealed" is not null)),
        add constraint "webhook_endpoint_enabled_is_complete"
          check (not "enabled" or ("url" is not null and "shared_secret_sealed" is not null));`);
  }
}
