/**
 * `npm run bench:adaptive`: an endpoint's adaptive in-flight limit under a burst whose receiver
 * slows mid-way. One service process (ROLE=all, the built dist) on a fresh database; a receiver in
 * this process that answers in about 1 ms, then, once half the burst has arrived, after 200 ms.
 * The endpoint has `maxInFlight` 200 and the worker enough slots to use it
 * (WEBHOOK_CONCURRENCY 400, WEBHOOK_PER_ORGANIZATION_CONCURRENCY 250).
 *
 * Measured from the delivery log (each attempt's `in_flight_limit` and start) and the receiver
 * (requests at once, sampled every 50 ms): how soon the limit reached maxInFlight after the
 * commit; the limit when the receiver slowed; how soon after that an attempt started under a
 * lower limit, under half of it, and under the start limit (the service's default of 10, which
 * latency alone never goes below); the most requests the receiver had at once before and two
 * seconds after it slowed; attempts that timed out or failed; how long the rest took.
 *
 * Options: BENCH_ADAPTIVE_EVENTS (4000), BENCH_ADAPTIVE_SLOW_MS (200), BENCH_DATABASE_BASE_URL,
 * REDIS_URL, BENCH_KEEP_DB=1 (the run's Redis keys are deleted either way).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { freePort, round, sleep } from './bench-kit';

const ROOT = resolve(__dirname, '..');
const env = process.env;
const EVENTS = Number(env.BENCH_ADAPTIVE_EVENTS ?? 4000);
const SLOW_MS = Number(env.BENCH_ADAPTIVE_SLOW_MS ?? 200);
const MAX_IN_FLIGHT = 200;
/** Where the limit starts, and as low as latency alone takes it: the service's default in-flight limit. */
const START_LIMIT = 10;
const RUN_ID = `${Date.now().toString(36)}${process.pid}`;
const OPERATOR_KEY = randomBytes(24).toString('hex');
const KEY = randomBytes(32).toString('base64');
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = (line: string) => process.stderr.write(`[adaptive ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** A UUIDv7 as the service makes them (time-ordered), from a millisecond expression and a salt (as bench/run.ts). */
const uuid7Sql = (ms: string, salt: string) =>
  `(substr(lpad(to_hex(${ms}), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(${ms}), 12, '0'), 9, 4) || '-7' ||
    substr(md5(${salt}), 1, 3) || '-8' || substr(md5(${salt}), 4, 3) || '-' || substr(md5(${salt}), 7, 12))::uuid`;

/** The receiver: answers after `delayMs`, counting requests at once and sampling that count. */
function startReceiver() {
  const state = { delayMs: 1, inFlight: 0, seen: new Set<string>(), received: 0, slowedAt: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.received += 1;
      state.inFlight += 1;
      const id = String(req.headers['x-service-webhook-id'] ?? '');
      state.seen.add(id);
      if (state.slowedAt === 0 && state.seen.size >= EVENTS / 2) {
        state.delayMs = SLOW_MS;
        state.slowedAt = Date.now();
      }
      setTimeout(() => {
        state.inFlight -= 1;
        res.writeHead(200).end('ok');
      }, state.delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  const samples: { at: number; inFlight: number }[] = [];
  const sampler = setInterval(() => samples.push({ at: Date.now(), inFlight: state.inFlight }), 50);
  return new Promise<{ url: string; state: typeof state; samples: typeof samples; stop: () => void }>((res) =>
    server.listen(0, '127.0.0.1', () =>
      res({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        state,
        samples,
        stop: () => {
          clearInterval(sampler);
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

async function startService(databaseUrl: string) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: env.PATH,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      ROLE: 'all',
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: `benchad${RUN_ID}`,
      DB_MIGRATE_ON_START: 'false',
      SECRETS_ENCRYPTION_KEY: KEY,
      AUDIT_CHAIN_KEY: KEY,
      MEDIA_SIGNING_KEY: KEY,
      METRICS_TOKEN: OPERATOR_KEY,
      OPERATOR_API_KEY: OPERATOR_KEY,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_PER_KEY: '10000000',
      RATE_LIMIT_PER_IP: '10000000',
      WEBHOOK_CONCURRENCY: '400',
      WEBHOOK_PER_ORGANIZATION_CONCURRENCY: '250',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error('service not ready in 60 s');
    await sleep(200);
  }
  return { url, stop: () => child.kill('SIGTERM') };
}

async function call<T>(url: string, method: string, key: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist/src/main.js'))) execFileSync('npx', ['nest', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const base = new URL(env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_bench_adaptive_${RUN_ID}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl })));
  await runMigrations(orm, databaseUrl).finally(() => orm.close(true));
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const receiver = await startReceiver();
  const service = await startService(databaseUrl);
  try {
    const org = await call<{ id: string }>(`${service.url}/admin/v1/organizations`, 'POST', OPERATOR_KEY, { name: 'adaptive' });
    const { key } = await call<{ key: string }>(`${service.url}/admin/v1/organizations/${org.id}/api-keys`, 'POST', OPERATOR_KEY, {
      name: 'bench',
      roles: ['admin'],
    });
    const endpoint = await call<{ id: string }>(`${service.url}/api/organization/v1/current-organization/webhook-endpoints`, 'POST', key, {
      url: receiver.url,
      webhookTypes: ['transaction'],
      sharedSecret: randomBytes(24).toString('hex'),
      maxInFlight: MAX_IN_FLIGHT,
    });
    const loadBefore = loadavg()[0];
    log(`burst of ${EVENTS} events; the receiver slows to ${SLOW_MS} ms after ${EVENTS / 2}`);
    await db.query(
      `insert into "domain_event" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action", "changes")
       select ${uuid7Sql('(extract(epoch from clock_timestamp()) * 1000)::bigint', 'random()::text || i')}, clock_timestamp(), $1,
              'transaction', 'Transaction', gen_random_uuid(), 'create', null
         from generate_series(1, ${EVENTS}) i`,
      [org.id],
    );
    const committedAt = Date.now();
    const deadline = committedAt + 300_000;
    for (;;) {
      const { rows } = await db.query<{ n: string }>(
        `select count(*) as n from webhook_delivery where endpoint_id = $1 and status <> 'pending'`,
        [endpoint.id],
      );
      if (Number(rows[0].n) >= EVENTS || Date.now() > deadline) break;
      await sleep(250);
    }
    const doneAt = Date.now();
    const loadAfter = loadavg()[0];
    const attempts = (
      await db.query<{ started: Date; limit: number | null; status: number | null; error: string | null }>(
        `select a.started_at as started, a.in_flight_limit as limit, a.response_status as status, a.error
           from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id where d.endpoint_id = $1 order by a.started_at`,
        [endpoint.id],
      )
    ).rows.map((r) => ({ ...r, at: r.started.getTime() }));
    const slowedAt = receiver.state.slowedAt;
    const firstAt = (test: (a: (typeof attempts)[number]) => boolean) => attempts.find(test)?.at ?? null;
    const seconds = (from: number, to: number | null) => (to === null ? null : round((to - from) / 1000, 2));
    const before = attempts.filter((a) => a.at < slowedAt);
    const limitWhenSlowed = Math.max(...before.slice(-50).map((a) => a.limit ?? 0));
    const mostAtOnce = (from: number, to: number) =>
      Math.max(0, ...receiver.samples.filter((s) => s.at >= from && s.at < to).map((s) => s.inFlight));
    const result = {
      events: EVENTS,
      slowMs: SLOW_MS,
      maxInFlight: MAX_IN_FLIGHT,
      loadAverage1m: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
      reachedMaxInFlightS: seconds(
        committedAt,
        firstAt((a) => a.limit === MAX_IN_FLIGHT),
      ),
      limitWhenSlowed,
      loweredAfterSlowingS: seconds(
        slowedAt,
        firstAt((a) => a.at >= slowedAt && (a.limit ?? Infinity) < limitWhenSlowed),
      ),
      halvedAfterSlowingS: seconds(
        slowedAt,
        firstAt((a) => a.at >= slowedAt && (a.limit ?? Infinity) <= limitWhenSlowed / 2),
      ),
      startLimitAfterSlowingS: seconds(
        slowedAt,
        firstAt((a) => a.at >= slowedAt && a.limit === START_LIMIT),
      ),
      limitAtEnd: attempts.at(-1)?.limit ?? null,
      receiverMostAtOnce: {
        beforeSlowing: mostAtOnce(committedAt, slowedAt),
        twoToFourSecondsAfter: mostAtOnce(slowedAt + 2000, slowedAt + 4000),
      },
      attempts: attempts.length,
      failedAttempts: attempts.filter((a) => a.status !== 200).length,
      // A timeout or a broken connection leaves no status.
      unanswered: attempts.filter((a) => a.status === null).length,
      firstHalfS: seconds(committedAt, slowedAt),
      restS: seconds(slowedAt, doneAt),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    service.stop();
    receiver.stop();
    await db.end();
    await sleep(2000);
    // The run's queues and limits in Redis.
    const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `benchad${RUN_ID}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    } catch (error) {
      log(`could not clean Redis: ${String(error)}`);
    } finally {
      redis.disconnect();
    }
    if (!env.BENCH_KEEP_DB) {
      const admin = new URL(databaseUrl);
      const name = admin.pathname.slice(1);
      admin.pathname = '/postgres';
      const client = new Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`).catch(() => undefined);
      await client.end();
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
