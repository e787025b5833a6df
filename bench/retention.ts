/**
 * `npm run bench:retention`: how long pruning one day of 1,000,000 finished webhooks takes, with
 * the service's own batched prune (WebhookDeliveryRepository.prune), and the longest single
 * statement of it, which is how long any lock it takes is held. For comparison, the same day
 * deleted by one statement. Each webhook has one attempt row (deleted by cascade), as most do.
 * Runs on a fresh database it drops at the end. BENCH_RETENTION_ROWS (1000000),
 * BENCH_RETENTION_BATCH (5000), BENCH_RETENTION_SINGLE=0 skips the one-statement comparison.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { WebhookDelivery } from '../src/modules/webhooks/webhook-delivery.entity';

const env = process.env;
const ROWS = Number(env.BENCH_RETENTION_ROWS ?? 1_000_000);
const BATCH = Number(env.BENCH_RETENTION_BATCH ?? 5000);
const log = (message: string) => process.stderr.write(`[retention ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function fill(db: Client, organizationId: string): Promise<void> {
  const started = Date.now();
  // One day, 31 days ago, plus a day of recent rows that must stay.
  for (const [offsetDays, count] of [
    [31, ROWS],
    [1, Math.round(ROWS / 10)],
  ] as const) {
    await db.query(
      `with d as (
         insert into webhook_delivery (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, payload,
           event_created_at, status, attempt_count, cycle_start_attempt, last_attempt_at, next_attempt_at, last_response_status, succeeded_at)
         select gen_random_uuid(), t, $1::uuid, 'transaction', 'Transaction', gen_random_uuid(), 'create',
                '{"organizationId":"' || $1::text || '","action":"create","id":"x","resourceId":"y","resourceType":"Transaction","createdAtUtc":"2026-10-23T00:00:00.000000+00:00","changes":null}',
                t, case when i % 50 = 0 then 'failed' else 'succeeded' end, 1, 0, t, null, 200, t
           from generate_series(1, $2::int) i, lateral (select now() - make_interval(days => $3::int) + (i * (86400.0 / $2::int)) * interval '1 second' as t) x
         returning id, created_at
       )
       insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
       select id, 1, created_at, 12, 200, null from d`,
      [organizationId, count, offsetDays],
    );
  }
  await db.query('vacuum analyze webhook_delivery');
  await db.query('vacuum analyze webhook_attempt');
  log(`filled ${ROWS} + ${Math.round(ROWS / 10)} rows in ${Math.round((Date.now() - started) / 1000)} s`);
}

async function main(): Promise<void> {
  const databaseUrl = `postgresql://postgres@127.0.0.1:5432/nftw_retention_${Date.now().toString(36)}`;
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl })));
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const result: Record<string, unknown> = { rows: ROWS, batch: BATCH };
  try {
    await runMigrations(orm, databaseUrl);
    const [{ id: organizationId }] = (
      await db.query(`insert into organization (id, created_at, name) values (gen_random_uuid(), now(), 'retention') returning id`)
    ).rows;
    await fill(db, organizationId);

    const before = new Date(Date.now() - 30 * 86_400_000);
    const batches: number[] = [];
    const started = performance.now();
    const deleted = await orm.em
      .fork()
      .getRepository(WebhookDelivery)
      .prune(before, BATCH, (_n, ms) => batches.push(ms));
    const totalMs = performance.now() - started;
    const sorted = [...batches].sort((a, b) => a - b);
    result.batched = {
      deleted,
      totalS: Math.round(totalMs / 100) / 10,
      statements: batches.length,
      longestStatementMs: Math.round(sorted[sorted.length - 1] ?? 0),
      medianStatementMs: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    };
    log(`batched: ${JSON.stringify(result.batched)}`);
    const left = (await db.query('select count(*)::int as n from webhook_delivery')).rows[0].n;
    if (left !== Math.round(ROWS / 10)) throw new Error(`expected the recent day to stay, found ${left} rows`);

    if (env.BENCH_RETENTION_SINGLE !== '0') {
      await db.query('truncate webhook_delivery cascade');
      await fill(db, organizationId);
      const singleStarted = performance.now();
      const single = await db.query(`delete from webhook_delivery where created_at < $1 and status in ('succeeded', 'failed')`, [before]);
      result.oneStatement = { deleted: single.rowCount, lockHeldS: Math.round((performance.now() - singleStarted) / 100) / 10 };
      log(`one statement: ${JSON.stringify(result.oneStatement)}`);
    }
  } finally {
    await db.end();
    await orm.close(true);
    const admin = new Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    await admin.query(`drop database if exists "${new URL(databaseUrl).pathname.slice(1)}" with (force)`);
    await admin.end();
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${String(error?.stack ?? error)}\n`);
  process.exit(1);
});
