import { Migration } from '@mikro-orm/migrations';

/** Custom headers sent on every webhook to an endpoint; none for the endpoints there are. */
export class Migration20261126032000EndpointHeaders extends Migration {
  up(): void {
    this.addSql(`alter table "webhook_endpoint" add column "headers" jsonb not null default '{}';`);
  }

  down(): void {
    this.addSql(`alter table "webhook_endpoint" drop column "headers";`);
  }
}
