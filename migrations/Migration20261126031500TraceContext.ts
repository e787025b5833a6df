import { Migration } from '@mikro-orm/migrations';

/**
 * The trace context of the request that wrote an event travels with it: `domain_event` keeps the
 * request's W3C traceparent and each webhook made from the event copies it, so the relay and
 * every attempt can link back to the request's trace. Null when tracing is off. Both tables are
 * partitioned by day; a column added to the parent is added to every partition.
 */
export class Migration20261126031500TraceContext extends Migration {
  up(): void {
    // Rows inserted by earlier migrations of the same run may still have deferred checks pending,
    // and a table with pending checks cannot be altered.
    this.addSql('set constraints all immediate;');
    this.addSql(`alter table "domain_event" add column "traceparent" text null;`);
    this.addSql(`alter table "webhook_delivery" add column "traceparent" text null;`);
  }

  down(): void {
    this.addSql(`alter table "webhook_delivery" drop column "traceparent";`);
    this.addSql(`alter table "domain_event" drop column "traceparent";`);
  }
}
