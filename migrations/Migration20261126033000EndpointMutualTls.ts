import { Migration } from '@mikro-orm/migrations';

export class Migration20261126033000EndpointMutualTls extends Migration {
  up(): void {
    // Mutual TLS towards a receiver: the client certificate (and an optional private CA to trust)
    // in clear with the subject and expiry read from it, the client key sealed like the secrets.
    this.addSql(`
      alter table "webhook_endpoint"
        add column "tls" jsonb null,
        add column "tls_client_key_sealed" text null,
        add constraint "webhook_endpoint_tls_complete"
          check (("tls" is null) = ("tls_client_key_sealed" is null));`);
  }

  down(): void {
    this.addSql(`
      alter table "webhook_endpoint"
        drop constraint if exists "webhook_endpoint_tls_complete",
        drop column if exists "tls",
        drop column if exists "tls_client_key_sealed";`);
  }
}
