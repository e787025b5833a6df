/**
 * `npm run bench:log-reads`: how the delivery log's pages (GET …/webhooks) and a replay's
 * selection (POST …/webhooks/replay) plan and perform at scale, before and after the migration
 * IndexOnlyReads, on the same data. Fills a fresh database (migrated up to the migration before
 * it) with the statistics bench's day of webhooks (bench/webhook-history.ts: 1,000,000 of one
 * organization among 300,000 of five others), runs the statements the service sent before under
 * EXPLAIN (ANALYZE, BUFFERS), applies the migration, vacuums, and runs the service's statements
 * now (deliveryPageSql, replayableSql) the same way. Each scenario's ids must be the same before
 * and after: the bench fails otherwise.
 *
 * Runs on a fresh database it drops at the end (BENCH_KEEP_DB=1 keeps it). Options:
 * BENCH_STATS_ROWS (1000000), BENCH_STATS_OTHER_ROWS (300000), BENCH_READS_RUNS (5),
 * BENCH_DATABASE_BASE_URL.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { loadavg } from 'node:os';
import { Client } from 'pg';
import { MIGRATIONS } from '../migrations';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import type { DeliveryStatus } from '../src/modules/webhooks/webhook-delivery.entity';
import { DeliveryLogQuery, deliveryPageSql, ReplayFilter, replayableSql } from '../src/modules/webhooks/webhook-delivery.repository';
import { dropBenchDatabase, fillWebhookHistory } from './webhook-history';

const env = process.env;
const ROWS = Number(env.BENCH_STATS_ROWS ?? 1_000_000);
const OTHER_ROWS = Number(env.BENCH_STATS_OTHER_ROWS ?? 300_000);
const RUNS = Number(env.BENCH_READS_RUNS ?? 5);
const PAGE = 100;
/** What a replay asks for: one more than it may send (MAX_REPLAY). */
const REPLAY_LIMIT = 10_001;
const MIGRATION = 'Migration20261126070000IndexOnlyReads';
const HOUR_MS = 3_600_000;
const log = (message: string) => process.stderr.write(`[reads ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const round2 = (value: number) => Math.round(value * 100) / 100;

/** The page's statement before: the ORM's find, every column of the rows it tested, newest first. */
function pageSqlBefore(organizationId: string, filter: DeliveryLogQuery, before: string | null, limit: number) {
  const conditions = ['w0.organization_id = ?'];
  const bindings: unknown[] = [organizationId];
  const add = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    bindings.push(...values);
  };
  if (filter.status) add('w0.status = ?', filter.status);
  if (filter.endpointId) add('w0.endpoint_id = ?', filter.endpointId);
  if (filter.webhookTypes?.length) add(`w0.webhook_type in (${filter.webhookTypes.map(() => '?').join(', ')})`, ...filter.webhookTypes);
  if (filter.since) add('w0.created_at >= ?', filter.since);
  if (filter.until) add('w0.created_at < ?', filter.until);
  if (before) add('w0.id < ?', before);
  return {
    sql: `select w0.* from webhook_delivery as w0 where ${conditions.join(' and ')} order by w0.id desc limit ?`,
    bindings: [...bindings, limit],
  };
}

/** `?` placeholders as `$n`, as the driver sends them. */
function native(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

interface Measured {
  scenario: string;
  schema: 'before' | 'after';
  execMs: number;
  planningMs: number;
  rows: number;
  nodes: string[];
  heapFetches: number;
  sharedHit: number;
  sharedRead: number;
}

async function main(): Promise<void> {
  const base = new URL(env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_reads_${Date.now().toString(36)}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl })));
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const plans: string[] = [];
  const measured: Measured[] = [];
  const result: Record<string, unknown> = { rows: ROWS, otherRows: OTHER_ROWS, runs: RUNS };
  try {
    const previous = MIGRATIONS[MIGRATIONS.findIndex((m) => m.name === MIGRATION) - 1].name;
    await orm.getMigrator().up({ to: previous });
    const orgs = (
      await db.query(
        `insert into organization (id, created_at, name) select gen_random_uuid(), now(), 'reads ' || n from generate_series(0, 5) n returning id`,
      )
    ).rows.map((r) => r.id as string);
    const [organizationId, ...others] = orgs;
    await fillWebhookHistory(db, { organizationId, others, rows: ROWS, otherRows: OTHER_ROWS, log });
    // Built afresh, as the migration builds its indexes, so that sizes before and after compare.
    await db.query('reindex table webhook_delivery');

    const now = Date.now();
    const at = (hoursAgo: number) => new Date(now - hoursAgo * HOUR_MS);
    // A page deep in the log: its key is the id of the organization's webhook of 12 hours ago.
    const [{ id: deepKey }] = (
      await db.query(`select id from webhook_delivery where organization_id = $1 and created_at < $2 order by created_at desc limit 1`, [
        organizationId,
        at(12),
      ])
    ).rows;
    const endpoint = '00000000-0000-7000-8000-000000000002';
    const pages: [string, DeliveryLogQuery, string | null][] = [
      ['log page, no filter, newest', {}, null],
      ['log page, no filter, 12 h deep', {}, deepKey],
      ['log page, status failed', { status: 'failed' }, null],
      ['log page, endpoint', { endpointId: endpoint }, null],
      ['log page, type kyc', { webhookTypes: ['kyc'] }, null],
      ['log page, 6 h window ending 6 h ago', { since: at(12), until: at(6) }, null],
      ['log page, failed + endpoint + kyc', { status: 'failed', endpointId: endpoint, webhookTypes: ['kyc'] }, null],
    ];
    const replays: [string, ReplayFilter][] = [
      ['replay, 6 h of failed', { since: at(6), until: new Date(now), statuses: ['failed'] }],
      ['replay, 6 h of failed, one endpoint', { since: at(6), until: new Date(now), statuses: ['failed'], endpointId: endpoint }],
      [
        'replay, 6 h of failed, types nft + kyc',
        { since: at(6), until: new Date(now), statuses: ['failed'], webhookTypes: ['nft', 'kyc'] },
      ],
      ['replay, 1 h of all finished', { since: at(1), until: new Date(now), statuses: ['failed', 'succeeded'] as DeliveryStatus[] }],
      ['replay, 24 h of failed', { since: at(24), until: new Date(now), statuses: ['failed'] }],
    ];
    const selected = new Map<string, string>();
    const indexSizes = async () =>
      Object.fromEntries(
        (
          await db.query(
            `select c.relname as name, sum(pg_relation_size(i.inhrelid))::bigint as bytes
               from pg_class c join pg_inherits i on i.inhparent = c.oid
              where c.relkind = 'I' and c.relname like 'webhook_delivery%' group by c.relname order by c.relname`,
          )
        ).rows.map((r) => [r.name, Math.round(Number(r.bytes) / 1048576)]),
      );
    result.indexMbBefore = await indexSizes();

    async function measure(schema: 'before' | 'after', scenario: string, sql: string, bindings: unknown[]): Promise<void> {
      const text = native(sql);
      const ids = (await db.query(text, bindings)).rows.map((r) => r.id as string).join(',');
      if (schema === 'before') selected.set(scenario, ids);
      else if (selected.get(scenario) !== ids) throw new Error(`${scenario}: the ids differ before and after`);
      const runs: { execMs: number; planningMs: number; plan: string }[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        const plan = (await db.query(`explain (analyze, buffers) ${text}`, bindings)).rows.map((r) => r['QUERY PLAN']).join('\n');
        runs.push({
          execMs: Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]),
          planningMs: Number(/Planning Time: ([\d.]+)/.exec(plan)?.[1]),
          plan,
        });
      }
      const last = runs[runs.length - 1].plan;
      const buffers = /Buffers: shared( hit=(\d+))?( read=(\d+))?/.exec(last);
      const row: Measured = {
        scenario,
        schema,
        execMs: round2(median(runs.map((r) => r.execMs))),
        planningMs: round2(median(runs.map((r) => r.planningMs))),
        rows: ids === '' ? 0 : ids.split(',').length,
        nodes: [...new Set([...last.matchAll(/^\s*(?:->\s+)?(.+?)\s+\(cost=/gm)].map((m) => m[1].replace(/ on \S+.*$/, '')))],
        heapFetches: [...last.matchAll(/Heap Fetches: (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
        sharedHit: Number(buffers?.[2] ?? 0),
        sharedRead: Number(buffers?.[4] ?? 0),
      };
      log(JSON.stringify(row));
      plans.push(`-- ${schema}: ${scenario}\n${last}`);
      measured.push(row);
    }

    for (const [scenario, filter, key] of pages) {
      const { sql, bindings } = pageSqlBefore(organizationId, filter, key, PAGE + 1);
      await measure('before', scenario, sql, bindings);
    }
    for (const [scenario, filter] of replays) {
      const { sql, bindings } = replayableSql(organizationId, filter, REPLAY_LIMIT);
      await measure('before', scenario, sql, bindings);
    }
    result.loadAverageBefore = loadavg().map(round2);

    const started = Date.now();
    await orm.getMigrator().up({ to: MIGRATION });
    log(`${MIGRATION} applied in ${Math.round((Date.now() - started) / 1000)} s; vacuum analyze…`);
    await db.query('vacuum analyze webhook_delivery');
    result.indexMbAfter = await indexSizes();

    for (const [scenario, filter, key] of pages) {
      const { sql, bindings } = deliveryPageSql(organizationId, filter, key, PAGE + 1);
      await measure('after', scenario, sql, bindings);
    }
    for (const [scenario, filter] of replays) {
      const { sql, bindings } = replayableSql(organizationId, filter, REPLAY_LIMIT);
      await measure('after', scenario, sql, bindings);
    }
    result.loadAverageAfter = loadavg().map(round2);
    result.scenarios = measured;
  } finally {
    await db.end();
    await orm.close(true);
    await dropBenchDatabase(databaseUrl, env.BENCH_KEEP_DB === '1', log);
  }
  process.stdout.write(`${plans.join('\n\n')}\n\n${JSON.stringify(result, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${String(error?.stack ?? error)}\n`);
  process.exit(1);
});
