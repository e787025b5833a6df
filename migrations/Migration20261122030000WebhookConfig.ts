import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030000WebhookConfig extends Migration {
  up(): void {
    // At most one row per organization, enforced by the key; no row means the defaults. The check
    // backs up the service rule that an enabled configuration can always sign and send.
    this.addSql(`
      create table "webhook_config" (
        "organization_id" uuid primary key references "organization" ("id") on delete cascade,
        "url" text null,
        "enabled" boolean not null default false,
        "webhook_types" text[] not null default '{}',
        "shared_secret_sealed" text null,
        "updated_at" timestamptz(6) not null,
        constraint "webhook_config_enabled_is_complete"
          check (not "enabled" or ("url" is not null and "shared_secret_sealed" is not null))
      );`);
  }

  down(): void {
    this.addSql('drop table if exists "webhook_config";');
  }
}
