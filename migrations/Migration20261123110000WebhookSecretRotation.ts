import { Migration } from '@mikro-orm/migrations';

export class Migration20261123110000WebhookSecretRotation extends Migration {
  up(): void {
    // The secret a rotation replaced keeps signing beside the new one until it expires; it is
    // sealed like the current one and erased once expired. The pair is set and cleared together.
    this.addSql(`
      alter table "webhook_config"
        add column "previous_shared_secret_sealed" text null,
        add column "previous_secret_expires_at" timestamptz(6) null,
        add constraint "webhook_config_previous_secret_pair"
          check (("previous_shared_secret_sealed" is null) = ("previous_secret_expires_at" is null));`);
    // The worker's cleanup finds expired previous secrets without scanning every configuration.
    this.addSql(`
      create index "webhook_config_previous_secret_expiry" on "webhook_config" ("previous_secret_expires_at")
        where "previous_secret_expires_at" is not null;`);
  }

  down(): void {
    this.addSql('drop index if exists "webhook_config_previous_secret_expiry";');
    this.addSql(`
      alter table "webhook_config"
        drop constraint if exists "webhook_config_previous_secret_pair",
        drop column if exists "previous_shared_secret_sealed",
        drop column if exists "previous_secret_expires_at";`);
  }
}
