import { Migration } from '@mikro-orm/migrations';

/** Each table of the per-webhook history, its partition key and its columns in their order. */
const HISTORY = [
  {
    table: 'domain_event',
    key: 'id',
    columns: `"id" uuid not null,
      "created_at" timestamptz(6) not null,
      "organization_id" uuid not null constraint "domain_event_organization_id_fkey" references "organization" ("id") on delete cascade,
      "webhook_type" text not null,
      "resource_type" text not null,
      "resource_id" uuid not null,
      "action" text not null,
      "changes" jsonb null,
      "relayed_at" timestamptz(6) null,
      "processed_at" timestamptz(6) null,
      "contract_address" text null,
      constraint "domain_event_pkey" primary key ("id")`,
    names: [
      'id',
      'created_at',
      'organization_id',
      'webhook_type',
      'resource_type',
      'resource_id',
      'action',
      'changes',
      'relayed_at',
      'processed_at',
      'contract_address',
    ],
    indexes: [
      `create index "domain_event_organization_resource_index" on "domain_event" ("organization_id", "resource_id")`,
      `create index "domain_event_unprocessed_index" on "domain_event" ("created_at") where "processed_at" is null`,
      `create index "domain_event_unrelayed_index" on "domain_event" ("created_at") where "relayed_at" is null`,
    ],
  },
  {
    table: 'webhook_delivery',
    key: 'id',
    columns: `"id" uuid not null,
      "created_at" timestamptz(6) not null,
      "organization_id" uuid not null constraint "webhook_delivery_organization_id_fkey" references "organization" ("id") on delete cascade,
      "webhook_type" text not null,
      "resource_type" text not null,
      "resource_id" uuid not null,
      "action" text not null,
      "payload" text not null,
      "event_created_at" timestamptz(6) not null,
      "status" text not null constraint "webhook_delivery_status_check" check ("status" in ('pending', 'succeeded', 'failed')),
      "attempt_count" int not null default 0,
      "cycle_start_attempt" int not null default 0,
      "last_attempt_at" timestamptz(6) null,
      "next_attempt_at" timestamptz(6) null,
      "last_response_status" int null,
      "succeeded_at" timestamptz(6) null,
      "event_id" uuid not null,
      "endpoint_id" uuid not null,
      constraint "webhook_delivery_pkey" primary key ("id")`,
    names: [
      'id',
      'created_at',
      'organization_id',
      'webhook_type',
      'resource_type',
      'resource_id',
      'action',
      'payload',
      'event_created_at',
      'status',
      'attempt_count',
      'cycle_start_attempt',
      'last_attempt_at',
      'next_attempt_at',
      'last_response_status',
      'succeeded_at',
      'event_id',
      'endpoint_id',
    ],
    indexes: [
      `create index "webhook_delivery_created_at_index" on "webhook_delivery" ("created_at")`,
      `create index "webhook_delivery_due_index" on "webhook_delivery" ("next_attempt_at") where "status" = 'pending'`,
      `create index "webhook_delivery_endpoint_index" on "webhook_delivery" ("organization_id", "endpoint_id", "id")`,
      `create index "webhook_delivery_organization_id_index" on "webhook_delivery" ("organization_id", "id")`,
      `create index "webhook_delivery_organization_status_index" on "webhook_delivery" ("organization_id", "status", "id")`,
      `create index "webhook_delivery_stats_index" on "webhook_delivery" ("organization_id", "created_at") include ("status", "attempt_count", "succeeded_at", "endpoint_id")`,
      `create index "webhook_delivery_type_index" on "webhook_delivery" ("organization_id", "webhook_type", "id")`,
    ],
  },
  {
    table: 'webhook_attempt',
    key: 'delivery_id',
    columns: `"delivery_id" uuid not null,
      "attempt" int not null,
      "started_at" timestamptz(6) not null,
      "duration_ms" int not null,
      "response_status" int null,
      "error" text null,
      constraint "webhook_attempt_pkey" primary key ("delivery_id", "attempt")`,
    names: ['delivery_id', 'attempt', 'started_at', 'duration_ms', 'response_status', 'error'],
    indexes: [],
  },
] as const;

/** Renames every index of `table` (its primary key's constraint with it) to free the names it had. */
const renameIndexes = (table: string, suffix: string) => `
  do $do$
  declare index_name text;
  begin
    for index_name in select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid
                       where i.indrelid = '"${table}"'::regclass loop
      execute format('alter index %I rename to %I', index_name, left(index_name, 40) || '${suffix}');
    end loop;
  end
  $do$;`;

/**
 * The per-webhook history (outbox events, webhooks, attempts) moves into PostgreSQL declarative
 * partitions, one per UTC day, so that retention drops whole days instead of deleting rows one
 * by one. The partition key is the id itself: events and webhooks have UUIDv7 ids, whose first 48
 * bits are the millisecond they were made (a webhook's id carries its event's time), and an
 * attempt is keyed by its webhook's id. So the primary keys stay as they are, the three tables of
 * one day are partitioned alike, and a day's partition is the range of ids between two UUIDs.
 *
 * `history_make_partitions` makes missing day partitions (the maintenance loop keeps days ahead);
 * a `_default` partition of each table takes any id outside the days made (an id that is not a
 * UUIDv7, or a time far off), and retention deletes from it by row. An attempt no longer has a
 * foreign key to its webhook: the two are removed together, partition by partition, and a
 * foreign key between partitioned tables would have every dropped day checked row by row.
 *
 * Existing rows are copied: partitions are made for every day that holds a UUIDv7 id, and today
 * and the next two days.
 */
export class Migration20261126000000TimePartitions extends Migration {
  up(): void {
    this.addSql('set constraints all immediate;');
    // The lowest UUID of a moment: its 48-bit millisecond timestamp, then zeros.
    this.addSql(`
      create function "history_partition_bound"(at timestamptz) returns uuid language sql immutable as $fn$
        select (lpad(to_hex(floor(extract(epoch from at) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid
      $fn$;`);
    // The UTC day a UUIDv7 was made on; null for any other kind of UUID.
    this.addSql(`
      create function "history_partition_day"(id uuid) returns date language sql immutable as $fn$
        select case when substr(id::text, 15, 1) = '7'
          then (to_timestamp(('x' || lpad(substr(replace(id::text, '-', ''), 1, 12), 16, '0'))::bit(64)::bigint / 1000.0) at time zone 'UTC')::date
        end
      $fn$;`);
    // Makes `parent`'s missing partitions for the days from first_day to last_day; returns how many.
    this.addSql(`
      create function "history_make_partitions"(parent text, first_day date, last_day date) returns int language plpgsql as $fn$
      declare
        day date := first_day;
        made int := 0;
        name text;
      begin
        while day <= last_day loop
          name := parent || '_p' || to_char(day, 'YYYYMMDD');
          if to_regclass(quote_ident(name)) is null then
            execute format('create table %I partition of %I for values from (%L) to (%L)', name, parent,
              history_partition_bound(day::timestamp at time zone 'UTC'), history_partition_bound((day + 1)::timestamp at time zone 'UTC'));
            made := made + 1;
          end if;
          day := day + 1;
        end loop;
        return made;
      end
      $fn$;`);

    for (const { table, key, columns, names, indexes } of HISTORY) {
      const list = names.map((n) => `"${n}"`).join(', ');
      // Free the names (the table's, its indexes' and constraints') for the partitioned table.
      this.addSql(`alter table "${table}" rename to "${table}_unpartitioned";`);
      this.addSql(renameIndexes(`${table}_unpartitioned`, '_unpartitioned'));
      this.addSql(`create table "${table}" (${columns}) partition by range ("${key}");`);
      for (const index of indexes) this.addSql(`${index};`);
      this.addSql(`create table "${table}_default" partition of "${table}" default;`);
      this.addSql(`
        do $do$
        declare day date;
        begin
          for day in select distinct history_partition_day("${key}") from "${table}_unpartitioned" where history_partition_day("${key}") is not null loop
            perform history_make_partitions('${table}', day, day);
          end loop;
          perform history_make_partitions('${table}', (now() at time zone 'UTC')::date, (now() at time zone 'UTC')::date + 2);
        end
        $do$;`);
      this.addSql(`insert into "${table}" (${list}) select ${list} from "${table}_unpartitioned";`);
    }
    // Attempts referenced their webhooks; the constraint goes with the old table.
    for (const { table } of [...HISTORY].reverse()) this.addSql(`drop table "${table}_unpartitioned";`);
    this.addSql(`
      create trigger "domain_event_notify" after insert on "domain_event"
      for each statement execute function "domain_event_notify"();`);
  }

  down(): void {
    for (const { table, columns, names, indexes } of HISTORY) {
      const list = names.map((n) => `"${n}"`).join(', ');
      this.addSql(`alter table "${table}" rename to "${table}_partitioned";`);
      this.addSql(renameIndexes(`${table}_partitioned`, '_partitioned'));
      this.addSql(`create table "${table}" (${columns});`);
      for (const index of indexes) this.addSql(`${index};`);
      this.addSql(`insert into "${table}" (${list}) select ${list} from "${table}_partitioned";`);
    }
    for (const { table } of HISTORY) this.addSql(`drop table "${table}_partitioned" cascade;`);
    this.addSql(`alter table "webhook_attempt" add foreign key ("delivery_id") references "webhook_delivery" ("id") on delete cascade;`);
    this.addSql(`
      create trigger "domain_event_notify" after insert on "domain_event"
      for each statement execute function "domain_event_notify"();`);
    this.addSql('drop function "history_make_partitions"(text, date, date);');
    this.addSql('drop function "history_partition_day"(uuid);');
    this.addSql('drop function "history_partition_bound"(timestamptz);');
  }
}
