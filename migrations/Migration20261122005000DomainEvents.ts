import { Migration } from '@mikro-orm/migrations';

export class Migration20261122005000DomainEvents extends Migration {
  up(): void {
    this.addSql(`
      create table "domain_event" (
        "id" uuid primary key,
        "created_at" timestamptz(6) not null,
        "organization_id" uuid not null references "organization" ("id") on delete cascade,
        "webhook_type" text not null,
        "resource_type" text not null,
        "resource_id" uuid not null,
        "action" text not null,
        "changes" jsonb null,
        "relayed_at" timestamptz(6) null
      );`);
    this.addSql(`create index "domain_event_unrelayed_index" on "domain_event" ("created_at") where "relayed_at" is null;`);
    this.addSql(`create index "domain_event_organization_resource_index" on "domain_event" ("organization_id", "resource_id");`);
  }

  down(): void {
    this.addSql('drop table if exists "domain_event";');
  }
}
