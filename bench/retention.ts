/**
 * `npm run bench:retention`: retention on the day-partitioned delivery history. Simulates
 * BENCH_RETENTION_DAYS (7) days of BENCH_RETENTION_ROWS (1,000,000) webhooks a day, each with its
 * event and one attempt, under a 3-day WEBHOOK_RETENTION; after each day the maintenance pass runs
 * as the worker runs it (partitions made ahead, expired days dropped). Reports, per day, the
 * partitions dropped, the longest drop (its transaction, so the time its lock was held) and the
 * history's total size, which must stay flat once the retention is reached. Runs on a fresh
 * database it drops at the end.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { dropDatabase } from '../test/support/database-admin';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { ENTITIES } from '../src/orm-model';
import { DAY_MS, utcDay } from '../src/database/time-partitions';
import { DomainEventStore } from '../src/modules/domain-events/domain-event.store';
import { DeliveryMaintenanceRepository } from '../src/modules/webhooks/delivery-maintenance.repository';

const env = process.env;
const ROWS = Number(env.BENCH_RETENTION_ROWS ?? 1_000_000);
const DAYS = Number(env.BENCH_RETENTION_DAYS ?? 7);
const RETENTION_DAYS = 3;
const log = (message: string) => process.stderr.write(`[retention ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/**
 * One simulated day of history: ROWS events, webhooks and attempts with UUIDv7 ids of that day
 * (a webhook's id is its event's, as for a default endpoint), spread over the day.
 */
async function fillDay(db: Client, organizationId: string, dayStart: Date): Promise<void> {
  const uuidAt = `(lpad(to_hex(($2::bigint + (i::bigint * ${DAY_MS}) / $3::bigint)), 12, '0') || '7' || substr(md5(i::text), 1, 3)
                  || '8' || substr(md5(i::text || 'x'), 1, 15))::uuid`;
  const atOf = `to_timestamp(($2::bigint + (i::bigint * ${DAY_MS}) / $3::bigint) / 1000.0)`;
  await db.query(
    `insert into domain_event (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, changes, relayed_at, processed_at)
     select ${uuidAt}, ${atOf}, $1::uuid, 'transaction', 'Transaction', gen_random_uuid(), 'create', null, ${atOf}, ${atOf}
       from generate_series(0, $3::int - 1) i`,
    [organizationId, dayStart.getTime(), ROWS],
  );
  await db.query(
    `insert into webhook_delivery (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, payload,
       event_created_at, status, attempt_count, cycle_start_attempt, last_attempt_at, next_attempt_at, last_response_status, succeeded_at,
       event_id, endpoint_id)
     select e.id, e.created_at, e.organization_id, 'transaction', 'Transaction', e.resource_id, 'create',
            '{"organizationId":"' || $1::text || '","action":"create","id":"x","resourceId":"y","resourceType":"Transaction","changes":null}',
            e.created_at, 'succeeded', 1, 0, e.created_at, null, 200, e.created_at, e.id, $1::uuid
       from domain_event e where e.id >= history_partition_bound(to_timestamp($2::bigint / 1000.0))
                             and e.id < history_partition_bound(to_timestamp(($2::bigint + ${DAY_MS}) / 1000.0))`,
    [organizationId, dayStart.getTime()],
  );
  await db.query(
    `insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
     select id, 1, created_at, 12, 200, null from webhook_delivery
      where id >= history_partition_bound(to_timestamp($1::bigint / 1000.0))
        and id < history_partition_bound(to_timestamp(($1::bigint + ${DAY_MS}) / 1000.0))`,
    [dayStart.getTime()],
  );
}

async function historyBytes(db: Client): Promise<number> {
  const { rows } = await db.query<{ bytes: string }>(
    `select coalesce(sum(pg_total_relation_size(i.inhrelid)), 0)::bigint as bytes
       from pg_inherits i where i.inhparent in ('domain_event'::regclass, 'webhook_delivery'::regclass, 'webhook_attempt'::regclass)`,
  );
  return Number(rows[0].bytes);
}

async function main(): Promise<void> {
  const databaseUrl = `postgresql://postgres@127.0.0.1:5432/nftw_retention_${Date.now().toString(36)}`;
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(
    buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl }), { entities: ENTITIES }),
  );
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const days: Record<string, unknown>[] = [];
  try {
    await runMigrations(orm, databaseUrl);
    const [{ id: organizationId }] = (
      await db.query(`insert into organization (id, created_at, name) values (gen_random_uuid(), now(), 'retention') returning id`)
    ).rows;
    const deliveries = new DeliveryMaintenanceRepository(orm.em.fork());
    const outbox = new DomainEventStore(orm.em.fork());
    // Simulated days end at today, so the partitions the migration made are the last ones.
    const firstDay = utcDay(new Date(Date.now() - (DAYS - 1) * DAY_MS));
    for (let d = 0; d < DAYS; d += 1) {
      const day = new Date(firstDay.getTime() + d * DAY_MS);
      await deliveries.makePartitions(day, new Date(day.getTime() + 3 * DAY_MS));
      await outbox.makePartitions(day, new Date(day.getTime() + 3 * DAY_MS));
      const filled = performance.now();
      await fillDay(db, organizationId, day);
      const fillS = Math.round((performance.now() - filled) / 1000);
      // The pass of the end of that day: everything older than the retention goes.
      const endOfDay = new Date(day.getTime() + DAY_MS - 1);
      const before = new Date(endOfDay.getTime() - RETENTION_DAYS * DAY_MS);
      const drops: { name: string; ms: number }[] = [];
      const started = performance.now();
      const onDrop = (name: string, ms: number) => drops.push({ name, ms });
      const pruned = [await deliveries.prune(before, 5000, onDrop), await outbox.prune(before, 5000, onDrop)];
      const pruneMs = performance.now() - started;
      const figures = {
        day: day.toISOString().slice(0, 10),
        fillS,
        partitionsDropped: drops.length,
        rowsDeletedOutsidePartitions: pruned[0].rows + pruned[1].rows,
        longestDropMs: Math.round(Math.max(0, ...drops.map((x) => x.ms)) * 10) / 10,
        pruneMs: Math.round(pruneMs),
        historyMiB: Math.round((await historyBytes(db)) / 1048576),
      };
      days.push(figures);
      log(JSON.stringify(figures));
    }
  } finally {
    await db.end();
    await orm.close(true);
    await dropDatabase(databaseUrl);
  }
  process.stdout.write(`${JSON.stringify({ rowsPerDay: ROWS, retentionDays: RETENTION_DAYS, days }, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${String(error?.stack ?? error)}\n`);
  process.exit(1);
});
