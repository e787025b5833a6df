import { Migration } from '@mikro-orm/migrations';

/**
 * Ordered delivery per resource. An endpoint's `ordering` is `none` (each webhook sent as soon as
 * it can be) or `resource` (the webhooks of one resource one at a time, in event order). A
 * webhook to an ordered endpoint keeps its place in that order as `sequence` (1, 2, 3… per
 * endpoint and resource; null for unordered endpoints), numbered from `webhook_sequence`, which
 * goes with its endpoint. The partial index finds a webhook's pending predecessors, the check
 * the claim makes before an ordered webhook is sent. `webhook_delivery` is partitioned by day: a
 * column or an index added to the parent is added to every partition.
 */
export class Migration20261126040000OrderedDelivery extends Migration {
  up(): void {
    // Rows inserted by earlier migrations of the same run may still have deferred checks pending,
    // and a table with pending checks cannot be altered.
    this.addSql('set constraints all immediate;');
    this.addSql(`
      alter table "webhook_endpoint" add column "ordering" text not null default 'none',
        add constraint "webhook_endpoint_ordering_check" check ("ordering" in ('none', 'resource'));`);
    this.addSql(`alter table "webhook_delivery" add column "sequence" bigint null;`);
    this.addSql(`
      create index "webhook_delivery_pending_sequence_index" on "webhook_delivery" ("endpoint_id", "resource_id", "sequence")
        where "status" = 'pending' and "sequence" is not null;`);
    this.addSql(`
      create table "webhook_sequence" (
        "endpoint_id" uuid not null references "webhook_endpoint" ("id") on delete cascade,
        "resource_id" uuid not null,
        "last_sequence" bigint not null,
        primary key ("endpoint_id", "resource_id")
      );`);
  }

  down(): void {
    this.addSql('drop table if exists "webhook_sequence";');
    this.addSql('drop index if exists "webhook_delivery_pending_sequence_index";');
    this.addSql('alter table "webhook_delivery" drop column "sequence";');
    this.addSql('alter table "webhook_endpoint" drop constraint "webhook_endpoint_ordering_check", drop column "ordering";');
  }
}
