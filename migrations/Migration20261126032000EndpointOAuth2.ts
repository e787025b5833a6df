import { Migration } from '@mikro-orm/migrations';

export class Migration20261126032000EndpointOAuth2 extends Migration {
  up(): void {
    // How the service authenticates to a receiver that wants a bearer token: the token endpoint,
    // client id and scope in clear (shown on GET), the client secret sealed like the other secrets.
    this.addSql(`
      alter table "webhook_endpoint"
        add column "auth" jsonb null,
        add column "auth_client_secret_sealed" text null,
        add constraint "webhook_endpoint_auth_complete"
          check (("auth" is null) = ("auth_client_secret_sealed" is null));`);
  }

  down(): void {
    this.addSql(`
      alter table "webhook_endpoint"
        drop constraint if exists "webhook_endpoint_auth_complete",
        drop column if exists "auth",
        drop column if exists "auth_client_secret_sealed";`);
  }
}
