import { Migration } from '@mikro-orm/migrations';

/** Each index the delivery log and a replay choose webhooks by: its key, and what it carries now and before. */
const INDEXES = [
  // The log's keyset (no filter, a time window, or several filters at once): it replaces
  // "webhook_delivery_organization_id_index", which nothing else read.
  {
    name: 'webhook_delivery_log_index',
    key: '"organization_id", "id"',
    include: '"status", "endpoint_id", "webhook_type", "created_at"',
    was: null,
  },
  {
    name: 'webhook_delivery_organization_status_index',
    key: '"organization_id", "status", "id"',
    include: '"endpoint_id", "webhook_type", "created_at"',
    was: '',
  },
  {
    name: 'webhook_delivery_endpoint_index',
    key: '"organization_id", "endpoint_id", "id"',
    include: '"status", "webhook_type", "created_at"',
    was: '',
  },
  {
    name: 'webhook_delivery_type_index',
    key: '"organization_id", "webhook_type", "id"',
    include: '"status", "endpoint_id", "created_at"',
    was: '',
  },
  {
    name: 'webhook_delivery_stats_index',
    key: '"organization_id", "created_at"',
    include: '"status", "attempt_count", "succeeded_at", "endpoint_id", "webhook_type", "id"',
    was: '"status", "attempt_count", "succeeded_at", "endpoint_id"',
  },
] as const;

const create = (name: string, key: string, include: string) =>
  `create index "${name}" on "webhook_delivery" (${key})${include ? ` include (${include})` : ''};`;

/**
 * The delivery log's pages and a replay's selection choose webhooks from the indexes alone (an
 * index-only scan: no visit to the rows, which carry the payload), whatever mix of filters they
 * are given: every index either may choose by carries every column they filter on, and the id.
 *
 * - The log pages newest first on (organization, id), or on (organization, status|endpoint|type,
 *   id) with that filter; each now carries the other filters (status, endpoint, type, created_at).
 * - A replay selects by created_at: on the statistics index (organization, created_at), which now
 *   carries the type and the id too, or, for failed webhooks only, on the status index.
 *
 * No index is added: each replaces the one of the same key (the same name, but for the log's,
 * which replaces "webhook_delivery_organization_id_index"). Created on the partitioned table, each
 * is made on every day partition, and on each partition made after.
 */
export class Migration20261126070000IndexOnlyReads extends Migration {
  up(): void {
    this.addSql('drop index "webhook_delivery_organization_id_index";');
    for (const { name, key, include, was } of INDEXES) {
      if (was !== null) this.addSql(`drop index "${name}";`);
      this.addSql(create(name, key, include));
    }
  }

  down(): void {
    for (const { name, key, was } of INDEXES) {
      this.addSql(`drop index "${name}";`);
      if (was !== null) this.addSql(create(name, key, was));
    }
    this.addSql(create('webhook_delivery_organization_id_index', '"organization_id", "id"', ''));
  }
}
