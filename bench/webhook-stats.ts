/**
 * `npm run bench:stats`: the delivery statistics query (GET …/webhooks/stats) at scale. Fills a
 * fresh database with 1,000,000 webhooks of one organization over the last 24 hours (plus other
 * organizations' webhooks interleaved in time, as they arrive in production) with a realistic mix
 * of statuses, attempts and latencies, then runs the service's own statement (webhookStatsSql,
 * which WebhookStatsReader sends) under EXPLAIN (ANALYZE, BUFFERS) for the portal's 24 h of hourly
 * buckets and for 24 h of minute buckets, and times WebhookStatsReader itself.
 *
 * Baselines in the same run, on the same data:
 *   - "without the index": the same statement with webhook_delivery_stats_index dropped inside a
 *     transaction that is rolled back, i.e. the schema before its migration;
 *   - "GROUP BY": the same aggregation written as one GROUP BY over the window (no empty buckets),
 *     the obvious alternative to one range scan per bucket.
 * And "after churn": the hourly query again once the last hour's rows were updated as delivery
 * does (pending → succeeded), before autovacuum marks their pages all-visible.
 *
 * Runs on a fresh database it drops at the end (BENCH_KEEP_DB=1 keeps it). Options:
 * BENCH_STATS_ROWS (1000000), BENCH_STATS_OTHER_ROWS (300000, spread over 5 organizations),
 * BENCH_STATS_RUNS (5), BENCH_DATABASE_BASE_URL.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { ENTITIES } from '../src/orm-model';
import {
  STATS_STATEMENT_SETTINGS,
  StatsQuery,
  WebhookStatsReader,
  webhookStatsSql,
} from '../src/modules/webhooks/stats/webhook-stats.reader';
import { resolveStatsWindow, StatsBucketSize } from '../src/modules/webhooks/stats/webhook-stats.rules';
import { dropBenchDatabase, fillWebhookHistory } from './webhook-history';

const env = process.env;
const ROWS = Number(env.BENCH_STATS_ROWS ?? 1_000_000);
const OTHER_ROWS = Number(env.BENCH_STATS_OTHER_ROWS ?? 300_000);
const OTHER_ORGS = 5;
const SMALL_ROWS = Math.round(OTHER_ROWS / OTHER_ORGS);
const RUNS = Number(env.BENCH_STATS_RUNS ?? 5);
const log = (message: string) => process.stderr.write(`[stats ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const round1 = (value: number) => Math.round(value * 10) / 10;

interface Explained {
  execMs: number;
  planningMs: number;
  plan: string;
}

/**
 * EXPLAIN ANALYZE under the settings the reader applies to its statement (STATS_STATEMENT_SETTINGS),
 * in a transaction of its own unless the caller holds one; `settings: false` keeps the server's.
 */
async function explain(
  db: Client,
  sql: string,
  bindings: unknown[],
  options: { settings?: boolean; inTransaction?: boolean } = {},
): Promise<Explained> {
  if (!options.inTransaction) await db.query('begin');
  if (options.settings !== false) for (const setting of STATS_STATEMENT_SETTINGS) await db.query(setting);
  const result = await db.query(`explain (analyze, buffers) ${sql}`, bindings);
  if (!options.inTransaction) await db.query('commit');
  const plan = result.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  return {
    execMs: Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]),
    planningMs: Number(/Planning Time: ([\d.]+)/.exec(plan)?.[1]),
    plan,
  };
}

/** The figures a reader of the plan looks for first. */
function summarize(plan: string) {
  const nodes = [...plan.matchAll(/^\s*(?:->\s+)?(.+?)\s+\(cost=/gm)].map((m) => m[1]);
  const buffers = /Buffers: shared( hit=(\d+))?( read=(\d+))?/.exec(plan);
  return {
    nodes: [...new Set(nodes)],
    sharedHit: Number(buffers?.[2] ?? 0),
    sharedRead: Number(buffers?.[4] ?? 0),
    heapFetches: [...plan.matchAll(/Heap Fetches: (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0),
    jit: /JIT:/.test(plan),
  };
}

/** The same aggregation as one GROUP BY over the window: what one range scan per bucket replaces. */
function groupBySql(query: StatsQuery): { sql: string; bindings: unknown[] } {
  const native = webhookStatsSql(query);
  const [, , width, organizationId, since, , until] = native.bindings;
  return {
    sql: `select date_bin($1::interval, created_at, timestamptz '1970-01-01 00:00:00+00') as start_utc,
                 count(*) filter (where status = 'succeeded')::int as succeeded,
                 count(*) filter (where status = 'failed')::int as failed,
                 count(*) filter (where attempt_count > 1)::int as retried,
                 percentile_cont(array[0.5, 0.99]) within group (order by greatest(date_part('epoch', succeeded_at - created_at) * 1000, 0))
                   filter (where status = 'succeeded') as percentiles
            from webhook_delivery
           where organization_id = $2 and created_at >= $3::timestamptz and created_at < $4::timestamptz
           group by 1 order by 1`,
    bindings: [width, organizationId, since, until],
  };
}

async function main(): Promise<void> {
  const base = new URL(env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_stats_${Date.now().toString(36)}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(
    buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl }), { entities: ENTITIES }),
  );
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const result: Record<string, unknown> = { rows: ROWS, otherRows: OTHER_ROWS, runs: RUNS };
  const plans: string[] = [];
  try {
    await runMigrations(orm, databaseUrl);
    const orgs = (
      await db.query(
        `insert into organization (id, created_at, name) select gen_random_uuid(), now(), 'stats ' || n from generate_series(0, $1::int) n returning id`,
        [OTHER_ORGS],
      )
    ).rows.map((r) => r.id as string);
    const [organizationId, ...others] = orgs;
    await fillWebhookHistory(db, { organizationId, others, rows: ROWS, otherRows: OTHER_ROWS, log });
    result.tableMb = Math.round(Number((await db.query(`select pg_table_size('webhook_delivery') as n`)).rows[0].n) / 1048576);
    result.statsIndexMb = Math.round(
      Number((await db.query(`select pg_relation_size('webhook_delivery_stats_index') as n`)).rows[0].n) / 1048576,
    );

    const knex = orm.em.getKnex();
    const reader = new WebhookStatsReader(orm.em.fork());
    const scenarios: Record<string, unknown>[] = [];

    async function measure(
      label: string,
      sql: string,
      bindings: unknown[],
      options: { timeReader?: StatsQuery; settings?: boolean; inTransaction?: boolean } = {},
    ): Promise<Record<string, unknown>> {
      const { timeReader } = options;
      const runs: Explained[] = [];
      for (let i = 0; i < RUNS; i += 1) runs.push(await explain(db, sql, bindings, options));
      const wall: number[] = [];
      let buckets = 0;
      if (timeReader) {
        for (let i = 0; i < RUNS; i += 1) {
          const started = performance.now();
          buckets = (await reader.buckets(timeReader)).length;
          wall.push(performance.now() - started);
        }
      }
      const last = runs[runs.length - 1];
      const row = {
        scenario: label,
        execMs: round1(median(runs.map((r) => r.execMs))),
        planningMs: round1(median(runs.map((r) => r.planningMs))),
        ...(timeReader ? { readerCallMs: round1(median(wall)), buckets } : {}),
        ...summarize(last.plan),
      };
      log(JSON.stringify(row));
      plans.push(`-- ${label}\n${last.plan}`);
      scenarios.push(row);
      return row;
    }

    const now = new Date();
    const queryFor = (bucket: StatsBucketSize): StatsQuery => ({ organizationId, window: resolveStatsWindow({ bucket }, now) });
    const queries: Record<StatsBucketSize, StatsQuery> = { '1h': queryFor('1h'), '1m': queryFor('1m') };
    const native = (query: StatsQuery) => {
      const { sql, bindings } = webhookStatsSql(query);
      return knex.raw(sql, bindings).toSQL().toNative();
    };

    for (const bucket of ['1h', '1m'] as const) {
      const { sql, bindings } = native(queries[bucket]);
      await measure(`service query, 24 h of ${bucket} buckets`, sql, [...bindings], { timeReader: queries[bucket] });
    }
    for (const bucket of ['1h', '1m'] as const) {
      const { sql, bindings } = native(queries[bucket]);
      await measure(`service query with the server's JIT settings, ${bucket} buckets`, sql, [...bindings], { settings: false });
    }
    // A smaller organization: the planner's guess per bucket does not shrink with the data.
    const smaller = (bucket: StatsBucketSize): StatsQuery => ({ organizationId: others[0], window: resolveStatsWindow({ bucket }, now) });
    for (const bucket of ['1h', '1m'] as const) {
      const { sql, bindings } = native(smaller(bucket));
      await measure(`smaller organization (${SMALL_ROWS} a day), ${bucket} buckets`, sql, [...bindings], { timeReader: smaller(bucket) });
      await measure(`smaller organization, with the server's JIT settings, ${bucket} buckets`, sql, [...bindings], { settings: false });
    }
    for (const bucket of ['1h', '1m'] as const) {
      const { sql, bindings } = groupBySql(queries[bucket]);
      await measure(`GROUP BY over the window, ${bucket} buckets (same index)`, sql, bindings);
    }
    // The schema before the migration, on the same data: dropped and restored by a rollback.
    await db.query('begin');
    try {
      await db.query('drop index webhook_delivery_stats_index');
      for (const setting of STATS_STATEMENT_SETTINGS) await db.query(setting);
      for (const bucket of ['1h', '1m'] as const) {
        const { sql, bindings } = native(queries[bucket]);
        await measure(`service query without the stats index, ${bucket} buckets`, sql, [...bindings], { inTransaction: true });
      }
    } finally {
      await db.query('rollback');
    }
    // Delivery keeps updating the newest rows: their pages are not all-visible until autovacuum runs.
    const churned = await db.query(
      `update webhook_delivery set status = 'succeeded', succeeded_at = created_at + interval '80 milliseconds', next_attempt_at = null
        where organization_id = $1 and created_at >= now() - interval '1 hour' and status = 'pending'`,
      [organizationId],
    );
    await db.query(
      `update webhook_delivery set last_response_status = 200
        where organization_id = $1 and created_at >= now() - interval '1 hour' and random() < 0.2`,
      [organizationId],
    );
    log(`churn: ${churned.rowCount} pending rows of the last hour delivered, 20 % of the hour's rows touched`);
    {
      const { sql, bindings } = native(queries['1h']);
      await measure('service query after churn of the last hour (before autovacuum), 1h buckets', sql, [...bindings], {
        timeReader: queries['1h'],
      });
    }

    result.scenarios = scenarios;
    const by = (label: string) => scenarios.find((s) => String(s.scenario).startsWith(label))!;
    result.ratios = {
      hourlyWithoutIndexOverService: round1(
        Number(by('service query without the stats index, 1h').execMs) / Number(by('service query, 24 h of 1h').execMs),
      ),
      minuteWithoutIndexOverService: round1(
        Number(by('service query without the stats index, 1m').execMs) / Number(by('service query, 24 h of 1m').execMs),
      ),
      hourlyGroupByOverService: round1(Number(by('GROUP BY over the window, 1h').execMs) / Number(by('service query, 24 h of 1h').execMs)),
      minuteGroupByOverService: round1(Number(by('GROUP BY over the window, 1m').execMs) / Number(by('service query, 24 h of 1m').execMs)),
      smallerHourlyJitOverService: round1(
        Number(by("smaller organization, with the server's JIT settings, 1h").execMs) / Number(by('smaller organization (').execMs),
      ),
      smallerMinuteJitOverService: round1(
        Number(by("smaller organization, with the server's JIT settings, 1m").execMs) /
          Number(
            scenarios.find((x) => String(x.scenario).startsWith('smaller organization (') && String(x.scenario).endsWith('1m buckets'))!
              .execMs,
          ),
      ),
      hourlyJitOverService: round1(
        Number(by("service query with the server's JIT settings, 1h").execMs) / Number(by('service query, 24 h of 1h').execMs),
      ),
      minuteJitOverService: round1(
        Number(by("service query with the server's JIT settings, 1m").execMs) / Number(by('service query, 24 h of 1m').execMs),
      ),
    };
    result.loadAverage = (await import('node:os')).loadavg().map(round1);
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
