import { Migration } from '@mikro-orm/migrations';

export class Migration20261126031000EndpointSigningKeys extends Migration {
  up(): void {
    // An endpoint may sign with an Ed25519 key pair beside its shared secret: the private key is
    // sealed like the secrets, the public key (raw 32 bytes, base64) is shown to integrators. A
    // rotation keeps the replaced pair signing for the previous secret's window, so the pair's
    // previous half only exists while that window does.
    this.addSql(`
      alter table "webhook_endpoint"
        add column "signing_private_key_sealed" text null,
        add column "signing_public_key" text null,
        add column "previous_signing_private_key_sealed" text null,
        add column "previous_signing_public_key" text null,
        add constraint "webhook_endpoint_signing_key_pair"
          check (("signing_private_key_sealed" is null) = ("signing_public_key" is null)),
        add constraint "webhook_endpoint_previous_signing_key_pair"
          check (("previous_signing_private_key_sealed" is null) = ("previous_signing_public_key" is null)
             and ("previous_signing_private_key_sealed" is null or "previous_secret_expires_at" is not null));`);
  }

  down(): void {
    this.addSql(`
      alter table "webhook_endpoint"
        drop constraint if exists "webhook_endpoint_previous_signing_key_pair",
        drop constraint if exists "webhook_endpoint_signing_key_pair",
        drop column if exists "signing_private_key_sealed",
        drop column if exists "signing_public_key",
        drop column if exists "previous_signing_private_key_sealed",
        drop column if exists "previous_signing_public_key";`);
  }
}
