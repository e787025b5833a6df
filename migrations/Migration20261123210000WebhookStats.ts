import { Migration } from '@mikro-orm/migrations';

export class Migration20261123210000WebhookStats extends Migration {
  up(): void {
    // Delivery statistics read one organization's webhooks by creation time, one bucket at a time.
    // Covering the columns they aggregate lets each bucket be an index-only range scan: the heap
    // (whose rows carry the payload) is visited only for pages not yet marked all-visible.
    this.addSql(`
      create index "webhook_delivery_stats_index" on "webhook_delivery" ("organization_id", "created_at")
        include ("status", "attempt_count", "succeeded_at", "endpoint_id");`);
  }

  down(): void {
    this.addSql('drop index if exists "webhook_delivery_stats_index";');
  }
}
