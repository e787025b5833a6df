/**
 * `npm run bench`: measures the real service against raw baselines in the same run, on a fresh
 * database, and writes bench/results/<ISO time>.json plus a Markdown table on stdout.
 *
 * Scenarios: readBalances, readToken (autocannon, service vs node:http + pg), webhookThroughput
 * (20,000 committed events to a signature-checking receiver, service vs a plain undici POST
 * loop), commit-to-receipt latency at a steady rate, scale-out (two workers vs one, alternated
 * over two rounds, each measured warm from vacuumed tables) and the
 * balances page time for wallets of 100, 10,000 and 100,000 NFTs. See BENCHMARKS.md.
 *
 * Environment (all optional): BENCH_DATABASE_BASE_URL (postgresql://postgres@127.0.0.1:5432),
 * REDIS_URL, BENCH_PROFILE=1 (statements and Redis commands per webhook of each burst; needs
 * pg_stat_statements in shared_preload_libraries and a Redis of the bench's own), BENCH_ROUNDS (3), BENCH_DURATION_S (6), BENCH_CONNECTIONS (10), BENCH_EVENTS (20000),
 * BENCH_STEADY_RATE (200), BENCH_STEADY_S (15), BENCH_SCALE_OUT_CYCLES (2), BENCH_FANOUT_ROUNDS (5), BENCH_CHOICES_ROUNDS (3), BENCH_KEEP_DB=1, BENCH_CPU_PROF=<dir>, BENCH_NODE_FLAGS (the service processes' node flags; `npm start`'s by default),
 * BENCH_ONLY (comma-separated: readBalances,readToken,readTokenFixedRate,largeWallet,balancesAsOf,walletTransfers,chainLedger,writes,webhooks,fanOut,fairness,brokers;
 * fanOut needs webhooks).
 * brokers: the burst to one RabbitMQ destination and to one JetStream destination beside an HTTP burst of the same run
 * (bench/brokers.ts; the machine's RabbitMQ and NATS, or BENCH_RABBITMQ_URL and BENCH_NATS_URL).
 * balancesAsOf: balances pages at a past instant of a wallet of 10,000 NFTs with 100,000 movements
 * (bench/balances-as-of.ts); walletTransfers: activity feed pages of a wallet with 100,000 movements
 * (bench/wallet-transfers.ts); chainLedger: recording and reverting 10,000 chain movements
 * (bench/chain-ledger.ts); fairness: a healthy organization's commit-to-receipt p99 while a noisy
 * one's 8 endpoints answer after BENCH_FAIRNESS_SLOW_MS (10000) with 800 webhooks queued, one worker
 * and two. The service tuning variables WEBHOOK_CONCURRENCY, WEBHOOK_PER_RECEIVER_CONCURRENCY,
 * WEBHOOK_PER_ORGANIZATION_CONCURRENCY and DB_POOL_MAX are passed on.
 */
import autocannon from 'autocannon';
import { ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { Agent } from 'undici';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { buildWebhookBody } from '../src/modules/webhooks/engine/webhook.rules';
import { signWebhookBody } from '../src/modules/webhooks/engine/webhook-signature';
import { formatUtc } from '../src/common/time';
import { fixedRateReads, RequestPathHarness, requestCounts, requestPathGoals, requestPathTable, writeScenarios } from './request-path';
import { CpuMeter, measureCpu, WorkProfile } from './webhook-cpu';
import { balancesAsOfScenario } from './balances-as-of';
import { chainLedgerScenario } from './chain-ledger';
import { walletTransfersScenario } from './wallet-transfers';
import { receiverChoicesScenario } from './receiver-choices';
import { brokersScenario } from './brokers';
import { cpuProfileEnv, freePort, median, percentile, round, serviceNodeArgs, sleep } from './bench-kit';

const ROOT = resolve(__dirname, '..');
const env = process.env;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 6);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 10);
const EVENTS = Number(env.BENCH_EVENTS ?? 20_000);
const STEADY_RATE = Number(env.BENCH_STEADY_RATE ?? 200);
const STEADY_S = Number(env.BENCH_STEADY_S ?? 15);
const ONLY = new Set(
  (
    env.BENCH_ONLY ??
    'readBalances,readToken,readTokenFixedRate,largeWallet,balancesAsOf,walletTransfers,chainLedger,writes,webhooks,fanOut,fairness,brokers'
  ).split(','),
);
const wants = (name: string) => ONLY.has(name);
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The service's default per-receiver concurrency: the baseline loop posts at the same concurrency. */
const PER_RECEIVER_CONCURRENCY = Number(env.WEBHOOK_PER_RECEIVER_CONCURRENCY ?? 10);
const POOL_MAX = 10;
/** Scale-out cycles (two rounds with a second worker, then one without) after the first one-worker burst. */
const SCALE_OUT_CYCLES = Math.max(1, Number(env.BENCH_SCALE_OUT_CYCLES ?? 2));
/** Times the fan-out burst is repeated: its figure is the median, and the rounds show its spread. */
const FANOUT_ROUNDS = Math.max(1, Number(env.BENCH_FANOUT_ROUNDS ?? 5));
const BENCH_LOG_LEVEL = 'warn';
const WHITELIST_CONTRACTS = 500;
const CONTRACTS = 1000;
const WALLET_SIZES = [100, 10_000, 100_000] as const;
const RUN_ID = `${Date.now().toString(36)}${process.pid}`;
const OPERATOR_KEY = randomBytes(24).toString('hex');
const SHARED_SECRET = randomBytes(24).toString('hex');
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// ---------------------------------------------------------------- build, database, processes

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function buildIfStale(): void {
  const main = join(ROOT, 'dist/src/main.js');
  const sources = Math.max(
    newestMtime(join(ROOT, 'src')),
    newestMtime(join(ROOT, 'migrations')),
    statSync(join(ROOT, 'package.json')).mtimeMs,
  );
  if (existsSync(main) && statSync(main).mtimeMs >= sources) return;
  log('dist is missing or older than src: npx nest build');
  execFileSync('npx', ['nest', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

class Service {
  constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(databaseUrl: string, role: 'all' | 'worker' | 'api'): Promise<Service> {
    const port = await freePort();
    const child = spawn(process.execPath, [...serviceNodeArgs(), join(ROOT, 'dist/src/main.js')], {
      cwd: ROOT,
      stdio: ['ignore', serviceLog(), serviceLog()],
      env: {
        PATH: env.PATH,
        NODE_ENV: 'production',
        // Pinned so that runs compare: a different level changes the service's own CPU.
        LOG_LEVEL: BENCH_LOG_LEVEL,
        PORT: String(port),
        ROLE: role,
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        QUEUE_PREFIX: `bench${RUN_ID}`,
        DB_MIGRATE_ON_START: 'false',
        SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY,
        AUDIT_CHAIN_KEY: ENCRYPTION_KEY,
        MEDIA_SIGNING_KEY: ENCRYPTION_KEY,
        METRICS_TOKEN: OPERATOR_KEY,
        OPERATOR_API_KEY: OPERATOR_KEY,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        // The limiter stays on (its cost is part of every request) but never refuses the load.
        RATE_LIMIT_PER_KEY: '10000000',
        RATE_LIMIT_PER_IP: '10000000',
        ...cpuProfileEnv(),
        ...pickEnv(/^(WEBHOOK_CONCURRENCY|WEBHOOK_PER_RECEIVER_CONCURRENCY|WEBHOOK_PER_ORGANIZATION_CONCURRENCY|DB_POOL_MAX)$/),
      },
    });
    const service = new Service(child, port);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`service (${role}) exited with ${child.exitCode}`);
      try {
        const res = await fetch(`${service.url}/health/ready`);
        if (res.ok) return service;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`service (${role}) not ready in 60 s`);
      await sleep(200);
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

let logFd: number | null = null;
/** The services' own output (warnings and errors only, at LOG_LEVEL=warn) goes to a file, not the table. */
function serviceLog(): number {
  if (logFd === null) {
    const path = join(tmpdir(), `nftw-bench-${RUN_ID}.log`);
    logFd = openSync(path, 'a');
    log(`service output: ${path}`);
  }
  return logFd;
}

function pickEnv(pattern: RegExp): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k, v]) => pattern.test(k) && v !== undefined)) as Record<string, string>;
}

/** A bench/*.ts helper in its own process (ts-node with swc), talking over IPC. */
async function startHelper(script: string, extraEnv: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(join(ROOT, 'bench', script), [], {
    cwd: ROOT,
    execArgv: ['-r', 'ts-node/register'],
    env: { ...env, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true', ...extraEnv },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((res, rej) => {
    child.once('exit', (code) => rej(new Error(`${script} exited with ${code}`)));
    child.on('message', (m: { type: string; port?: number }) => m.type === 'listening' && res(m.port!));
  });
  return { child, port };
}

function ask<T>(child: ChildProcess, type: string, extra: Record<string, unknown> = {}): Promise<T> {
  return new Promise((res) => {
    const onMessage = (m: { type: string }) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      res(m as T);
    };
    child.on('message', onMessage);
    child.send({ type, ...extra });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

async function api<T>(service: Service, method: string, path: string, key: string, body?: unknown): Promise<T> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

// ---------------------------------------------------------------- data

/** A UUIDv7 as the service makes them (time-ordered), from a millisecond expression and a salt. */
const uuid7Sql = (ms: string, salt: string) =>
  `(substr(lpad(to_hex(${ms}), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(${ms}), 12, '0'), 9, 4) || '-7' ||
    substr(md5(${salt}), 1, 3) || '-8' || substr(md5(${salt}), 4, 3) || '-' || substr(md5(${salt}), 7, 12))::uuid`;
const contractSql = (n: string) => `'0x' || substr(md5('contract' || ${n}) || md5('contract2' || ${n}), 1, 40)`;

interface Seed {
  readOrg: { id: string; key: string };
  hookOrg: { id: string; key: string };
  wallets: Record<number, string>;
  tokenIds: string[];
}

async function seed(service: Service, db: Client): Promise<Seed> {
  const createOrg = async (name: string) => {
    const org = await api<{ id: string }>(service, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name });
    const key = await api<{ key: string }>(service, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, OPERATOR_KEY, {
      name: 'bench',
      roles: ['admin'],
    });
    return { id: org.id, key: key.key };
  };
  const readOrg = await createOrg('bench reads');
  const hookOrg = await createOrg('bench webhooks');

  const contracts = (await db.query(`select ${contractSql('i')} as a from generate_series(1, ${CONTRACTS}) i`)).rows.map(
    (r: { a: string }) => r.a,
  );
  await api(service, 'POST', '/api/organization/v1/current-organization/nft-whitelist/contracts', readOrg.key, {
    contractAddresses: contracts.slice(0, WHITELIST_CONTRACTS),
  });
  await api(service, 'PATCH', '/api/organization/v1/current-organization/nft-whitelist', readOrg.key, { enabled: true });

  // Tokens of the largest wallets first, so the small wallet holds the organization's newest ids
  // (the case that a plan walking the organization's tokens in id order handles worst).
  const wallets: Record<number, string> = {};
  let clock = Date.now() - 10 * 86_400_000;
  for (const size of [...WALLET_SIZES].sort((a, b) => b - a)) {
    const wallet = await api<{ id: string }>(service, 'POST', '/v1/wallets', readOrg.key, { name: `holds ${size}` });
    wallets[size] = wallet.id;
    log(`seeding a wallet of ${size} NFTs`);
    await db.query(
      `with t as (
         insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id", "name",
           "description", "image", "animation_url", "external_url", "background_color", "edition_id", "total_edition",
           "creator_name", "creator_image_url", "creator_external_page_url")
         select ${uuid7Sql(`${clock}::bigint + i`, `'${size}-' || i`)}, now(), $1, ${contractSql('(i % ' + CONTRACTS + ') + 1')},
           '${size}' || lpad(i::text, 7, '0'), 'Bench NFT #' || i, 'A token of the benchmark wallet holding ${size} NFTs',
           'https://img.example.com/nft/' || i || '.png', null, 'https://example.com/nft/' || i, 'ffffff', i, ${size},
           'Bench Creator', 'https://img.example.com/creator.png', 'https://example.com/creator'
           from generate_series(1, ${size}) i
         returning "id")
       insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
       select $2, t."id", $1, 1, now() from t`,
      [readOrg.id, wallet.id],
    );
    clock += size + 1000;
  }
  const tokenIds = (
    await db.query(
      `select t."id" from "token" t join "balance" b on b."token_id" = t."id"
        where b."wallet_id" = $1 and t."contract_address" in (select "contract_address" from "nft_whitelist_contract" where "organization_id" = $2)
        order by random() limit 1000`,
      [wallets[10_000], readOrg.id],
    )
  ).rows.map((r: { id: string }) => r.id);
  await db.query('vacuum analyze');
  return { readOrg, hookOrg, wallets, tokenIds };
}

// ---------------------------------------------------------------- HTTP load

interface LoadResult {
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, key: string, paths: string[], durationS: number, connections = CONNECTIONS): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections,
    duration: durationS,
    headers: { authorization: `Bearer ${key}` },
    requests: [
      {
        method: 'GET',
        setupRequest: (req: Record<string, unknown>) => ({ ...req, path: paths[Math.floor(Math.random() * paths.length)] }),
      } as never,
    ],
  });
  return {
    rps: round(result.requests.average, 1),
    mean: round(result.latency.mean, 2),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

interface Compared {
  service: LoadResult;
  baseline: LoadResult;
  runs: { service: LoadResult[]; baseline: LoadResult[] };
  ratio: number;
}

async function compare(name: string, service: Service, baselineUrl: string, key: string, paths: string[]): Promise<Compared> {
  log(`${name}: warm-up`);
  await load(service.url, key, paths, 2);
  await load(baselineUrl, key, paths, 2);
  const runs = { service: [] as LoadResult[], baseline: [] as LoadResult[] };
  for (let i = 0; i < ROUNDS; i += 1) {
    // Alternating, so drift in the machine's load hits both sides alike.
    const order: ('service' | 'baseline')[] = i % 2 === 0 ? ['baseline', 'service'] : ['service', 'baseline'];
    for (const side of order) {
      const r = await load(side === 'service' ? service.url : baselineUrl, key, paths, DURATION_S);
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name} ${side}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      runs[side].push(r);
      log(`${name} ${side} round ${i + 1}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`);
    }
  }
  const summarise = (list: LoadResult[]): LoadResult => ({
    rps: median(list.map((r) => r.rps)),
    mean: median(list.map((r) => r.mean)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
    non2xx: 0,
    errors: 0,
  });
  const s = summarise(runs.service);
  const b = summarise(runs.baseline);
  return { service: s, baseline: b, runs, ratio: round(s.rps / b.rps, 3) };
}

// ---------------------------------------------------------------- webhooks

interface Stats {
  unique: number;
  received: number;
  badSignatures: number;
  firstAt: number;
  lastAt: number;
  latencies: number[];
}

interface DeliveryResult {
  events: number;
  delivered: number;
  seconds: number;
  deliveriesPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  duplicates: number;
  badSignatures: number;
}

async function waitForAll(receiver: ChildProcess, expected: number, timeoutMs: number): Promise<Stats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { unique } = await ask<{ unique: number }>(receiver, 'count');
    if (unique >= expected) break;
    if (Date.now() > deadline) {
      log(`only ${unique} of ${expected} webhooks arrived in ${timeoutMs / 1000} s`);
      break;
    }
    await sleep(100);
  }
  return ask<Stats>(receiver, 'stats');
}

function summariseDelivery(stats: Stats, expected: number, startedAt: number): DeliveryResult {
  const seconds = (stats.lastAt - startedAt) / 1000;
  return {
    events: expected,
    delivered: stats.unique,
    seconds: round(seconds, 2),
    deliveriesPerSecond: round(stats.unique / seconds, 1),
    latencyP50Ms: percentile(stats.latencies, 50),
    latencyP99Ms: percentile(stats.latencies, 99),
    duplicates: stats.received - stats.unique,
    badSignatures: stats.badSignatures,
  };
}

const insertEventsSql = (count: number) =>
  `insert into "domain_event" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action", "changes")
   select ${uuid7Sql('(extract(epoch from clock_timestamp()) * 1000)::bigint', 'random()::text || i')}, clock_timestamp(), $1,
          'transaction', 'Transaction', gen_random_uuid(), 'create', null
     from generate_series(1, ${count}) i`;

/**
 * EVENTS events committed in one transaction; the trigger's NOTIFY wakes the relay at commit.
 * With `endpoints` > 1 each event fans out to that many endpoints: that many webhooks each.
 */
async function burst(
  db: Client,
  receiver: ChildProcess,
  organizationId: string,
  endpoints = 1,
  events = EVENTS,
  insertSql = insertEventsSql(events),
): Promise<DeliveryResult> {
  await ask(receiver, 'reset', { secret: SHARED_SECRET });
  await db.query('begin');
  await db.query(insertSql, [organizationId]);
  await db.query('commit');
  const committedAt = Date.now();
  const stats = await waitForAll(receiver, events * endpoints, 240_000);
  return summariseDelivery(stats, events * endpoints, committedAt);
}

/**
 * Before a CPU measurement: an unmeasured burst, so every process measured has compiled its hot
 * paths (a fresh process spends a third more CPU on its first tens of thousands of webhooks; a
 * worker in production runs for days), then a VACUUM ANALYZE of the history tables, so no burst
 * pays for cleaning up after the one before it. Every configuration is then measured in the same
 * state: a process new to the run is warmed with EVENTS webhooks of its own, one already warm
 * with a fifth of that.
 */
async function warmUp(db: Client, receiver: ChildProcess, organizationId: string, events = Math.round(EVENTS / 5)): Promise<void> {
  await burst(db, receiver, organizationId, 1, Math.max(1, events));
  await db.query('vacuum analyze domain_event, webhook_delivery, webhook_attempt');
}

/** Events committed one transaction at a time at STEADY_RATE per second. */
async function steady(db: Client, receiver: ChildProcess, organizationId: string): Promise<DeliveryResult & { rate: number }> {
  await ask(receiver, 'reset', { secret: SHARED_SECRET });
  const total = STEADY_RATE * STEADY_S;
  const started = Date.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * STEADY_RATE) + 1);
    if (due > sent) {
      await db.query(insertEventsSql(due - sent), [organizationId]);
      sent = due;
    }
    await sleep(2);
  }
  const stats = await waitForAll(receiver, total, 60_000);
  return { ...summariseDelivery(stats, total, started), rate: STEADY_RATE };
}

/** The raw baseline: a plain undici loop signing and POSTing the same bodies at the same concurrency. */
async function postLoop(receiver: ChildProcess, receiverUrl: string, organizationId: string): Promise<DeliveryResult> {
  await ask(receiver, 'reset', { secret: SHARED_SECRET });
  const agent = new Agent({ connections: PER_RECEIVER_CONCURRENCY, keepAliveTimeout: 30_000 });
  const target = new URL(receiverUrl);
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < EVENTS) {
      next += 1;
      const id = crypto.randomUUID();
      const body = buildWebhookBody({
        organizationId,
        action: 'create',
        id,
        resourceId: crypto.randomUUID(),
        resourceType: 'Transaction',
        createdAtUtc: formatUtc(new Date()),
        changes: null,
      });
      const res = await agent.request({
        origin: target.origin,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'bench-baseline',
          'x-service-webhook-hmac': signWebhookBody(SHARED_SECRET, body),
          'x-service-webhook-id': id,
          'x-service-webhook-attempt': '1',
        },
        body,
      });
      await res.body.dump();
    }
  };
  await Promise.all(Array.from({ length: PER_RECEIVER_CONCURRENCY }, worker));
  await agent.close();
  const stats = await waitForAll(receiver, EVENTS, 10_000);
  return summariseDelivery(stats, EVENTS, started);
}

const FAIRNESS_SLOW_MS = Number(env.BENCH_FAIRNESS_SLOW_MS ?? 10_000);
const FAIRNESS_NOISY_ENDPOINTS = 8;
const FAIRNESS_NOISY_EVENTS = 100; // x 8 endpoints = 800 webhooks
const FAIRNESS_QUIET_RATE = 10; // events per second
const FAIRNESS_QUIET_S = 25; // past the noisy organization's first answers, into its steady state

interface FairnessResult {
  workers: number;
  quietEvents: number;
  delivered: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  noisyReceived: number;
}

/**
 * One organization saturates its endpoints (8 of them on a receiver answering after
 * FAIRNESS_SLOW_MS, 800 webhooks committed at once) while another commits FAIRNESS_QUIET_RATE
 * events a second to a healthy receiver: the healthy organization's commit-to-receipt latency.
 */
async function fairness(
  db: Client,
  noisy: { id: string },
  noisyReceiver: ChildProcess,
  quiet: { id: string },
  quietReceiver: ChildProcess,
  workers: number,
): Promise<FairnessResult> {
  await ask(quietReceiver, 'reset', { secret: SHARED_SECRET });
  await ask(noisyReceiver, 'reset', { secret: SHARED_SECRET });
  await db.query(insertEventsSql(FAIRNESS_NOISY_EVENTS), [noisy.id]);
  // Let the noisy organization's first attempts reach its receiver before measuring.
  const saturatedBy = Date.now() + 5000;
  while ((await ask<{ received: number }>(noisyReceiver, 'stats')).received < 10 && Date.now() < saturatedBy) await sleep(100);
  const total = FAIRNESS_QUIET_RATE * FAIRNESS_QUIET_S;
  const started = Date.now();
  for (let sent = 0; sent < total; sent += 1) {
    await sleep(Math.max(0, started + (sent * 1000) / FAIRNESS_QUIET_RATE - Date.now()));
    await db.query(insertEventsSql(1), [quiet.id]);
  }
  const stats = await waitForAll(quietReceiver, total, 120_000);
  const noisyStats = await ask<Stats>(noisyReceiver, 'stats');
  return {
    workers,
    quietEvents: total,
    delivered: stats.unique,
    latencyP50Ms: percentile(stats.latencies, 50),
    latencyP99Ms: percentile(stats.latencies, 99),
    latencyMaxMs: Math.max(...stats.latencies),
    noisyReceived: noisyStats.received,
  };
}

async function deliveryOutcome(db: Client, organizationId: string): Promise<Record<string, number>> {
  const rows = (
    await db.query(`select "status", count(*)::int as n from "webhook_delivery" where "organization_id" = $1 group by 1`, [organizationId])
  ).rows as { status: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = Date.now();
  buildIfStale();
  const base = new URL(env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_bench_${RUN_ID}`;
  const databaseUrl = base.toString();
  log(`database ${databaseUrl}`);
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl })));
  try {
    await runMigrations(orm, databaseUrl);
  } finally {
    await orm.close(true);
  }

  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const cleanups: (() => Promise<unknown>)[] = [];
  const result: Record<string, unknown> = {
    startedAt: new Date(started).toISOString(),
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
    settings: {
      logLevel: BENCH_LOG_LEVEL,
      rounds: ROUNDS,
      durationS: DURATION_S,
      connections: CONNECTIONS,
      events: EVENTS,
      steadyRate: STEADY_RATE,
      steadyS: STEADY_S,
      perReceiverConcurrency: PER_RECEIVER_CONCURRENCY,
    },
  };
  try {
    const service = await Service.start(databaseUrl, 'all');
    cleanups.push(() => service.stop());
    const data = await seed(service, db);
    const harness = requestPathHarness(service, databaseUrl, db);

    if (wants('readBalances') || wants('readToken') || wants('readTokenFixedRate') || wants('largeWallet')) {
      const baseline = await startHelper('baseline-server.ts', {
        BASELINE_DATABASE_URL: databaseUrl,
        BASELINE_ORGANIZATION_ID: data.readOrg.id,
        BASELINE_POOL_MAX: String(POOL_MAX),
      });
      cleanups.push(() => stopChild(baseline.child));
      const baselineUrl = `http://127.0.0.1:${baseline.port}`;
      const balancesPath = `/v2/wallets/${data.wallets[10_000]}/nft-balances?pageSize=100`;

      // Both sides must answer with the same bytes, or the comparison means nothing.
      for (const path of [balancesPath, `/v1/tokens/${data.tokenIds[0]}`]) {
        const [a, b] = await Promise.all(
          [service.url, baselineUrl].map(async (u) =>
            (await fetch(`${u}${path}`, { headers: { authorization: `Bearer ${data.readOrg.key}` } })).text(),
          ),
        );
        if (a !== b) throw new Error(`baseline and service disagree on ${path}:\n${a.slice(0, 300)}\n${b.slice(0, 300)}`);
      }

      if (wants('readBalances'))
        result.readBalances = await compare('readBalances', service, baselineUrl, data.readOrg.key, [balancesPath]);
      if (wants('readToken'))
        result.readToken = await compare(
          'readToken',
          service,
          baselineUrl,
          data.readOrg.key,
          data.tokenIds.map((id) => `/v1/tokens/${id}`),
        );

      if (wants('readTokenFixedRate')) {
        result.readTokenFixedRate = await fixedRateReads(
          harness,
          baselineUrl,
          data.readOrg.key,
          data.tokenIds.map((id) => `/v1/tokens/${id}`),
        );
      }

      const largeWallet: Record<string, unknown> = {};
      for (const size of wants('largeWallet') ? WALLET_SIZES : []) {
        const walletId = data.wallets[size];
        const middle = (
          await db.query(`select "token_id" from "balance" where "wallet_id" = $1 order by "token_id" offset $2 limit 1`, [
            walletId,
            Math.floor(size / 2),
          ])
        ).rows[0].token_id as string;
        const pageKey = Buffer.from(JSON.stringify([middle])).toString('base64url');
        const first = await load(service.url, data.readOrg.key, [`/v2/wallets/${walletId}/nft-balances?pageSize=100`], 3, 1);
        const deep = await load(
          service.url,
          data.readOrg.key,
          [`/v2/wallets/${walletId}/nft-balances?pageSize=100&pageKey=${pageKey}`],
          3,
          1,
        );
        const page = (r: LoadResult) => ({ meanMs: r.mean, p50: r.p50, p99: r.p99, rps: r.rps });
        largeWallet[size] = { firstPage: page(first), middlePage: page(deep) };
        log(`wallet of ${size}: first page mean ${first.mean} ms, middle page mean ${deep.mean} ms`);
      }
      if (wants('largeWallet')) result.largeWallet = largeWallet;
      await stopChild(baseline.child);
    }

    if (wants('balancesAsOf')) {
      result.balancesAsOf = await balancesAsOfScenario({
        db,
        serviceUrl: service.url,
        key: data.readOrg.key,
        organizationId: data.readOrg.id,
        createWallet: async () => (await api<{ id: string }>(service, 'POST', '/v1/wallets', data.readOrg.key, { name: 'as of' })).id,
        contractSql: (n) => contractSql(`((${n}) % ${CONTRACTS}) + 1`),
        load,
        log,
      });
    }
    if (wants('walletTransfers')) {
      result.walletTransfers = await walletTransfersScenario({
        db,
        serviceUrl: service.url,
        key: data.readOrg.key,
        organizationId: data.readOrg.id,
        createWallet: async () => (await api<{ id: string }>(service, 'POST', '/v1/wallets', data.readOrg.key, { name: 'feed' })).id,
        contractSql: (n) => contractSql(`((${n}) % ${CONTRACTS}) + 1`),
        load,
        log,
      });
    }
    if (wants('chainLedger')) {
      const org = await harness.createOrg('bench chain ledger');
      result.chainLedger = await chainLedgerScenario({ databaseUrl, db, organizationId: org.id, log });
    }

    if (wants('writes')) Object.assign(result, await writeScenarios(harness));

    if (wants('webhooks')) {
      const receiver = await startHelper('receiver.ts', {});
      cleanups.push(() => stopChild(receiver.child));
      const receiverUrl = `http://127.0.0.1:${receiver.port}/webhooks`;
      await api(service, 'PATCH', '/api/organization/v1/current-organization/webhook-config', data.hookOrg.key, {
        url: receiverUrl,
        sharedSecret: SHARED_SECRET,
        webhookTypes: ['transaction'],
        enabled: true,
      });

      log(`webhookThroughput: baseline POST loop, ${EVENTS} bodies at concurrency ${PER_RECEIVER_CONCURRENCY}`);
      const baseline = await postLoop(receiver.child, receiverUrl, data.hookOrg.id);
      log(`  ${baseline.deliveriesPerSecond}/s`);
      log(`webhookThroughput: service, one worker, ${EVENTS} events committed at once`);
      const cpuMeter = (pids: () => number[]) => new CpuMeter(pids, new URL(databaseUrl).pathname.slice(1));
      const profileRedis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1 });
      cleanups.push(() => profileRedis.quit());
      const profile =
        env.BENCH_PROFILE === '1'
          ? new WorkProfile(
              db,
              (section) => profileRedis.info(section),
              () => profileRedis.config('RESETSTAT'),
            )
          : null;
      /** measureCpu, plus the statements and Redis commands per webhook with BENCH_PROFILE=1. */
      const measured = async (label: string, pids: () => number[], run: () => Promise<DeliveryResult>) => {
        await profile?.start();
        const result = await measureCpu(cpuMeter(pids), run, db);
        if (profile) log(`  work per webhook, ${label}:\n${(await profile.report(result.delivered)).join('\n')}`);
        return result;
      };
      await warmUp(db, receiver.child, data.hookOrg.id, EVENTS);
      const oneWorker = await measured(
        'one worker',
        () => [service.child.pid!],
        () => burst(db, receiver.child, data.hookOrg.id),
      );
      log(
        `  ${oneWorker.deliveriesPerSecond}/s, commit-to-receipt p50 ${oneWorker.latencyP50Ms} ms, p99 ${oneWorker.latencyP99Ms} ms, ${oneWorker.cpuMsPerWebhook} CPU ms per webhook ${JSON.stringify(oneWorker.cpuMs)}, per webhook ${JSON.stringify(oneWorker.perWebhook)}`,
      );
      log(`steady: ${STEADY_RATE} events/s for ${STEADY_S} s, one worker`);
      const steadyOne = await steady(db, receiver.child, data.hookOrg.id);
      log(`  commit-to-receipt p50 ${steadyOne.latencyP50Ms} ms, p99 ${steadyOne.latencyP99Ms} ms`);

      // Scale-out: one worker and two, alternated in cycles of (two, two, one) after an opening
      // one-worker round: one, two, two, one, two, two, one... so a drift of the machine over the
      // run weighs on both configurations alike. The opening round is its own burst, not the
      // run's first one above: that first burst runs colder than every later one (here 2,220/s
      // against 3,900-4,400/s for the same service minutes later), and counting it made one
      // worker look dearer than it is. Each cycle starts a fresh second worker and warms it
      // like the first one. A configuration's figure is the mean of its rounds: on a shared 2-core
      // machine one burst can differ from an identical one by a fifth (autovacuum, checkpoints),
      // and with the rounds interleaved this way a linear drift cancels out of the means, where the
      // better round of each would favour whichever configuration happened to have an outlier.
      // Every round is logged and kept in the results.
      const twoWorkerRound = async (label: string, worker: Service) => {
        const measuredRound = await measured(
          label,
          () => [service.child.pid!, worker.child.pid!],
          () => burst(db, receiver.child, data.hookOrg.id),
        );
        log(
          `  ${measuredRound.deliveriesPerSecond}/s with two workers, ${measuredRound.cpuMsPerWebhook} CPU ms per webhook ${JSON.stringify(measuredRound.cpuMs)}, per webhook ${JSON.stringify(measuredRound.perWebhook)}`,
        );
        return measuredRound;
      };
      /** A warmed-up one-worker round of the comparison. */
      const oneWorkerRound = async (label: string) => {
        log(`scale-out: ${label}`);
        await warmUp(db, receiver.child, data.hookOrg.id);
        const measuredRound = await measured(
          label,
          () => [service.child.pid!],
          () => burst(db, receiver.child, data.hookOrg.id),
        );
        log(
          `  ${measuredRound.deliveriesPerSecond}/s with one worker, ${measuredRound.cpuMsPerWebhook} CPU ms per webhook ${JSON.stringify(measuredRound.cpuMs)}, per webhook ${JSON.stringify(measuredRound.perWebhook)}`,
        );
        return measuredRound;
      };
      const oneWorkerRounds = [await oneWorkerRound('one worker, opening round')];
      const twoWorkerRounds: Awaited<ReturnType<typeof twoWorkerRound>>[] = [];
      for (let cycle = 1; cycle <= SCALE_OUT_CYCLES; cycle += 1) {
        log(`scale-out cycle ${cycle}: a second worker process (ROLE=worker), two rounds`);
        const worker = await Service.start(databaseUrl, 'worker');
        cleanups.push(() => worker.stop());
        try {
          // The new process takes about half of a burst: twice EVENTS warm it like the first one.
          await warmUp(db, receiver.child, data.hookOrg.id, EVENTS * 2);
          twoWorkerRounds.push(await twoWorkerRound(`two workers, cycle ${cycle} round 1`, worker));
          await warmUp(db, receiver.child, data.hookOrg.id);
          twoWorkerRounds.push(await twoWorkerRound(`two workers, cycle ${cycle} round 2`, worker));
        } finally {
          await worker.stop();
        }
        oneWorkerRounds.push(await oneWorkerRound(`one worker, cycle ${cycle}`));
      }
      const meanOf = (rounds: { deliveriesPerSecond: number; cpuMsPerWebhook: number }[]) => ({
        deliveriesPerSecond: round(rounds.reduce((sum, r) => sum + r.deliveriesPerSecond, 0) / rounds.length, 1),
        cpuMsPerWebhook: round(rounds.reduce((sum, r) => sum + r.cpuMsPerWebhook, 0) / rounds.length, 3),
      });
      const better = <T extends { cpuMsPerWebhook: number }>(a: T, b: T) => (b.cpuMsPerWebhook < a.cpuMsPerWebhook ? b : a);
      const oneWorkerMean = meanOf(oneWorkerRounds);
      const twoWorkersMean = meanOf(twoWorkerRounds);
      const oneWorkerBest = oneWorkerRounds.reduce(better);
      const twoWorkersBest = twoWorkerRounds.reduce(better);
      const scaleOutRounds = {
        oneWorker: oneWorkerRounds.map((r) => ({ perSecond: r.deliveriesPerSecond, cpuMsPerWebhook: r.cpuMsPerWebhook })),
        twoWorkers: twoWorkerRounds.map((r) => ({ perSecond: r.deliveriesPerSecond, cpuMsPerWebhook: r.cpuMsPerWebhook })),
        meanCpuRatio: round(twoWorkersMean.cpuMsPerWebhook / oneWorkerMean.cpuMsPerWebhook, 3),
        bestCpuRatio: round(twoWorkersBest.cpuMsPerWebhook / oneWorkerBest.cpuMsPerWebhook, 3),
      };
      log(`scale-out rounds: ${JSON.stringify(scaleOutRounds)}`);

      if (wants('fanOut')) {
        // Fan-out: two more endpoints beside the default one (same receiver, same secret, so it
        // verifies every webhook), each event becoming three webhooks with ids of their own.
        log(`fan-out: ${EVENTS} events to 3 endpoints each, one worker`);
        const added: string[] = [];
        for (const path of ['second', 'third']) {
          const endpoint = await api<{ id: string }>(
            service,
            'POST',
            '/api/organization/v1/current-organization/webhook-endpoints',
            data.hookOrg.key,
            {
              url: `${receiverUrl}/${path}`,
              sharedSecret: SHARED_SECRET,
              webhookTypes: ['transaction'],
            },
          );
          added.push(endpoint.id);
        }
        // The same burst FANOUT_ROUNDS times over: whether it holds steady (within ±20 % of its
        // median) or falls off a cliff as PostgreSQL's autovacuum and checkpoints catch up. The
        // median round is the fan-out's figure.
        const fanOutRounds: Awaited<ReturnType<typeof measureCpu<DeliveryResult>>>[] = [];
        for (let r = 1; r <= FANOUT_ROUNDS; r += 1) {
          if (r > 1) await warmUp(db, receiver.child, data.hookOrg.id);
          const measuredRound = await measureCpu(
            cpuMeter(() => [service.child.pid!]),
            () => burst(db, receiver.child, data.hookOrg.id, 3),
            db,
          );
          log(
            `  round ${r}: ${measuredRound.deliveriesPerSecond} webhooks/s, commit-to-receipt p99 ${measuredRound.latencyP99Ms} ms, ${measuredRound.cpuMsPerWebhook} CPU ms per webhook ${JSON.stringify(measuredRound.cpuMs)}`,
          );
          fanOutRounds.push(measuredRound);
        }
        const byRate = [...fanOutRounds].sort((a, b) => a.deliveriesPerSecond - b.deliveriesPerSecond);
        const fanOut = byRate[Math.floor((byRate.length - 1) / 2)];
        const middle = median(fanOutRounds.map((r) => r.deliveriesPerSecond));
        const fanOutSpread = {
          perSecond: fanOutRounds.map((r) => r.deliveriesPerSecond),
          median: middle,
          lowestOfMedian: round(byRate[0].deliveriesPerSecond / middle, 3),
          highestOfMedian: round(byRate[byRate.length - 1].deliveriesPerSecond / middle, 3),
        };
        log(`  fan-out rounds: ${JSON.stringify(fanOutSpread)}`);
        // The same fan-out with one of the three endpoints ordered per resource: every event is a
        // resource of its own, so nothing waits; what shows is the cost of numbering and of the
        // claim's check for a pending predecessor.
        log(`fan-out with one endpoint ordered per resource: ${EVENTS} events to 3 endpoints each, one worker`);
        await api(service, 'PATCH', `/api/organization/v1/current-organization/webhook-endpoints/${added[1]}`, data.hookOrg.key, {
          ordering: 'resource',
        });
        await warmUp(db, receiver.child, data.hookOrg.id);
        const fanOutOrdered = await measureCpu(
          cpuMeter(() => [service.child.pid!]),
          () => burst(db, receiver.child, data.hookOrg.id, 3),
          db,
        );
        log(
          `  ${fanOutOrdered.deliveriesPerSecond} webhooks/s (unordered: ${fanOut.deliveriesPerSecond}), commit-to-receipt p99 ${fanOutOrdered.latencyP99Ms} ms, ${fanOutOrdered.cpuMsPerWebhook} CPU ms per webhook ${JSON.stringify(fanOutOrdered.cpuMs)}`,
        );
        await api(service, 'PATCH', `/api/organization/v1/current-organization/webhook-endpoints/${added[1]}`, data.hookOrg.key, {
          ordering: 'none',
        });
        // What receivers choose (payload, filter) costs the same fan-out, measured about real transactions.
        const choices = await receiverChoicesScenario(
          {
            db,
            organizationId: data.hookOrg.id,
            events: EVENTS,
            endpointIds: [data.hookOrg.id, ...added],
            patchEndpoint: (id, body) =>
              api(service, 'PATCH', `/api/organization/v1/current-organization/webhook-endpoints/${id}`, data.hookOrg.key, body),
            measure: (insertSql) =>
              measureCpu(
                cpuMeter(() => [service.child.pid!]),
                () => burst(db, receiver.child, data.hookOrg.id, 3, EVENTS, insertSql),
                db,
              ),
            warmUp: () => warmUp(db, receiver.child, data.hookOrg.id),
            uuid7Sql,
            log,
          },
          Number(env.BENCH_CHOICES_ROUNDS ?? 3),
        );
        result.receiverChoices = choices;
        log(
          `receiver choices, medians: thin ${choices.thin.deliveriesPerSecond}/s ${choices.thin.cpuMsPerWebhook} ms; filter ${choices.filter.deliveriesPerSecond}/s (${choices.filter.throughputRatio}, CPU ${choices.filter.cpuRatio}); full ${choices.full.deliveriesPerSecond}/s (${choices.full.throughputRatio}, CPU ${choices.full.cpuRatio})`,
        );
        result.webhookFanOut = {
          endpoints: 3,
          events: EVENTS,
          webhooks: EVENTS * 3,
          webhooksPerSecond: fanOut.deliveriesPerSecond,
          cpuMsPerWebhook: fanOut.cpuMsPerWebhook,
          singleEndpoint: { webhooksPerSecond: oneWorker.deliveriesPerSecond, cpuMsPerWebhook: oneWorker.cpuMsPerWebhook },
          service: fanOut,
          rounds: fanOutSpread,
          oneOrdered: {
            webhooksPerSecond: fanOutOrdered.deliveriesPerSecond,
            cpuMsPerWebhook: fanOutOrdered.cpuMsPerWebhook,
            service: fanOutOrdered,
          },
        };
      }

      result.webhookThroughput = {
        service: oneWorker,
        baseline,
        ratio: round(oneWorker.deliveriesPerSecond / baseline.deliveriesPerSecond, 3),
        deliveriesPerSecond: oneWorker.deliveriesPerSecond,
        cpuMsPerWebhook: oneWorker.cpuMsPerWebhook,
        cpuMsPerWebhookOneWorker: oneWorkerMean.cpuMsPerWebhook,
        cpuMsPerWebhookTwoWorkers: twoWorkersMean.cpuMsPerWebhook,
        cpuRatioTwoWorkers: scaleOutRounds.meanCpuRatio,
        scaleOutRounds,
      };
      result.steadyLatency = steadyOne;
      result.scaleOut = {
        oneWorker: oneWorkerMean,
        twoWorkers: twoWorkersMean,
        ratio: round(twoWorkersMean.deliveriesPerSecond / oneWorkerMean.deliveriesPerSecond, 3),
      };
      result.deliveryOutcome = await deliveryOutcome(db, data.hookOrg.id);
    }
    if (wants('brokers')) {
      const receiver = await startHelper('receiver.ts', {});
      cleanups.push(() => stopChild(receiver.child));
      const createOrg = async (name: string) => {
        const org = await api<{ id: string }>(service, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name });
        const key = await api<{ key: string }>(service, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, OPERATOR_KEY, {
          name: 'bench',
          roles: ['admin'],
        });
        return { id: org.id, key: key.key };
      };
      const httpOrg = await createOrg('bench brokers http');
      await api(service, 'PATCH', '/api/organization/v1/current-organization/webhook-config', httpOrg.key, {
        url: `http://127.0.0.1:${receiver.port}/webhooks`,
        sharedSecret: SHARED_SECRET,
        webhookTypes: ['transaction'],
        enabled: true,
      });
      const cpu = () => new CpuMeter(() => [service.child.pid!], new URL(databaseUrl).pathname.slice(1));
      result.brokers = await brokersScenario({
        db,
        runId: RUN_ID,
        events: EVENTS,
        createOrg,
        addEndpoint: (key, body) =>
          api<{ id: string }>(service, 'POST', '/api/organization/v1/current-organization/webhook-endpoints', key, body),
        insertSql: insertEventsSql,
        httpBurst: async () => {
          await warmUp(db, receiver.child, httpOrg.id, EVENTS);
          return measureCpu(cpu(), () => burst(db, receiver.child, httpOrg.id), db);
        },
        measure: (run) => measureCpu(cpu(), run, db),
        log,
      });
      await stopChild(receiver.child);
    }
    if (wants('fairness')) {
      const createOrg = async (name: string) => {
        const org = await api<{ id: string }>(service, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name });
        const key = await api<{ key: string }>(service, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, OPERATOR_KEY, {
          name: 'bench',
          roles: ['admin'],
        });
        return { id: org.id, key: key.key };
      };
      const slow = await startHelper('receiver.ts', { BENCH_RECEIVER_DELAY_MS: String(FAIRNESS_SLOW_MS) });
      cleanups.push(() => stopChild(slow.child));
      const healthy = await startHelper('receiver.ts', {});
      cleanups.push(() => stopChild(healthy.child));
      const noisy = await createOrg('bench noisy');
      const quiet = await createOrg('bench quiet');
      for (let i = 0; i < FAIRNESS_NOISY_ENDPOINTS; i += 1) {
        await api(service, 'POST', '/api/organization/v1/current-organization/webhook-endpoints', noisy.key, {
          url: `http://127.0.0.1:${slow.port}/slow-${i}`,
          sharedSecret: SHARED_SECRET,
          webhookTypes: ['transaction'],
        });
      }
      await api(service, 'PATCH', '/api/organization/v1/current-organization/webhook-config', quiet.key, {
        url: `http://127.0.0.1:${healthy.port}/webhooks`,
        sharedSecret: SHARED_SECRET,
        webhookTypes: ['transaction'],
        enabled: true,
      });
      log(`fairness: ${FAIRNESS_NOISY_ENDPOINTS} endpoints answering after ${FAIRNESS_SLOW_MS} ms with 800 webhooks, one worker`);
      const one = await fairness(db, noisy, slow.child, quiet, healthy.child, 1);
      log(`  healthy organization p50 ${one.latencyP50Ms} ms, p99 ${one.latencyP99Ms} ms, max ${one.latencyMaxMs} ms`);
      const worker = await Service.start(databaseUrl, 'worker');
      cleanups.push(() => worker.stop());
      log('fairness: the same with a second worker (another 800 noisy webhooks)');
      const two = await fairness(db, noisy, slow.child, quiet, healthy.child, 2);
      log(`  healthy organization p50 ${two.latencyP50Ms} ms, p99 ${two.latencyP99Ms} ms, max ${two.latencyMaxMs} ms`);
      await worker.stop();
      result.fairness = {
        slowMs: FAIRNESS_SLOW_MS,
        perOrganizationConcurrency: env.WEBHOOK_PER_ORGANIZATION_CONCURRENCY ?? 'default',
        oneWorker: one,
        twoWorkers: two,
      };
    }
    if (env.BENCH_CPU_PROF) result.requestCounts = await requestCounts(service.url);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await db.end();
    await dropEverything(databaseUrl);
  }

  const get = (path: string): number | null => {
    const value = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], result);
    return typeof value === 'number' ? value : null;
  };
  result.ratios = {
    readBalances: get('readBalances.ratio'),
    readToken: get('readToken.ratio'),
    webhookThroughput: get('webhookThroughput.ratio'),
  };
  result.goals = {
    readBalances: { target: '>= 0.8', holds: (get('readBalances.ratio') ?? 0) >= 0.8 },
    readToken: { target: '>= 0.5', holds: (get('readToken.ratio') ?? 0) >= 0.5 },
    webhookThroughput: { target: '>= 0.1 (stretch 0.25)', holds: (get('webhookThroughput.ratio') ?? 0) >= 0.1 },
    deliveriesPerSecondOneWorker: { target: '>= 1000', holds: (get('webhookThroughput.service.deliveriesPerSecond') ?? 0) >= 1000 },
    steadyP99: { target: '< 50 ms', holds: (get('steadyLatency.latencyP99Ms') ?? Infinity) < 50 },
    cpuMsPerWebhook: { target: '<= 1.5', holds: (get('webhookThroughput.cpuMsPerWebhook') ?? Infinity) <= 1.5 },
    cpuTwoWorkersVsOne: { target: '<= 1.1', holds: (get('webhookThroughput.cpuRatioTwoWorkers') ?? Infinity) <= 1.1 },
    ...requestPathGoals(result),
  };
  result.durationS = round((Date.now() - started) / 1000, 1);
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${new Date(started).toISOString().replace(/:/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${table(result)}\nwritten to ${file}\n`);
}

function requestPathHarness(service: Service, databaseUrl: string, db: Client): RequestPathHarness {
  const call = <T>(method: string, path: string, key: string, body?: unknown) => api<T>(service, method, path, key, body);
  return {
    serviceUrl: service.url,
    databaseUrl,
    db,
    rounds: ROUNDS,
    durationS: DURATION_S,
    sharedSecret: SHARED_SECRET,
    log,
    api: call,
    createOrg: async (name) => {
      const org = await call<{ id: string }>('POST', '/admin/v1/organizations', OPERATOR_KEY, { name });
      const key = await call<{ key: string }>('POST', `/admin/v1/organizations/${org.id}/api-keys`, OPERATOR_KEY, {
        name: 'bench',
        roles: ['admin'],
      });
      return { id: org.id, key: key.key };
    },
    startHelper,
    ask,
    stopChild,
    startApiProcess: async () => {
      const api = await Service.start(databaseUrl, 'api');
      return { url: api.url, stop: () => api.stop() };
    },
  };
}

async function dropEverything(databaseUrl: string): Promise<void> {
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `bench${RUN_ID}:*`, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } catch (error) {
    log(`could not clean Redis: ${String(error)}`);
  } finally {
    redis.disconnect();
  }
  if (env.BENCH_KEEP_DB) {
    log(`kept ${databaseUrl}`);
    return;
  }
  const admin = new URL(databaseUrl);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists "${name}" with (force)`).catch((e: unknown) => log(`could not drop ${name}: ${String(e)}`));
  await client.end();
}

function table(r: Record<string, unknown>): string {
  const x = r as Record<string, any>;
  const lines = ['| scenario | service | baseline | ratio (service/baseline) | goal |', '|---|---|---|---|---|'];
  const reads = (name: string, goal: string) => {
    const c = x[name] as Compared | undefined;
    if (!c) return;
    const f = (l: LoadResult) => `${l.rps} req/s, p50 ${l.p50} ms, p99 ${l.p99} ms`;
    lines.push(`| ${name} | ${f(c.service)} | ${f(c.baseline)} | **${c.ratio}** | ${goal} |`);
  };
  reads('readBalances', '≥ 0.8');
  reads('readToken', '≥ 0.5');
  lines.push(...requestPathTable(x));
  if (x.webhookThroughput) {
    const w = x.webhookThroughput;
    lines.push(
      `| webhookThroughput (${w.service.events} events, 1 worker) | ${w.service.deliveriesPerSecond}/s; commit-to-receipt p50 ${w.service.latencyP50Ms} ms, p99 ${w.service.latencyP99Ms} ms | ${w.baseline.deliveriesPerSecond}/s | **${w.ratio}** | ≥ 0.1 (stretch 0.25) and ≥ 1,000/s |`,
    );
    const s = x.steadyLatency;
    lines.push(
      `| commit-to-receipt at ${s.rate} events/s | p50 ${s.latencyP50Ms} ms, p99 ${s.latencyP99Ms} ms (${s.deliveriesPerSecond}/s) | | | p99 < 50 ms |`,
    );
    lines.push(
      `| CPU per delivered webhook (service, all PostgreSQL, Redis) | ${w.cpuMsPerWebhookOneWorker} ms (1 worker), ${w.cpuMsPerWebhookTwoWorkers} ms (2 workers), the mean of the interleaved rounds | | **${w.cpuRatioTwoWorkers}** (2 vs 1) | ≤ 1.5 ms; ≤ 1.1x |`,
    );
    const so = x.scaleOut;
    lines.push(
      `| scale-out (2 workers vs 1) | ${so.twoWorkers.deliveriesPerSecond}/s | ${so.oneWorker.deliveriesPerSecond}/s (1 worker) | **${so.ratio}** | > 1 |`,
    );
    const f = x.webhookFanOut;
    if (f) {
      lines.push(
        `| fan-out (${f.events} events × ${f.endpoints} endpoints, 1 worker, median of ${f.rounds.perSecond.length}) | ${f.webhooksPerSecond} webhooks/s, ${f.cpuMsPerWebhook} CPU ms per webhook, p99 ${f.service.latencyP99Ms} ms | ${f.singleEndpoint.webhooksPerSecond}/s, ${f.singleEndpoint.cpuMsPerWebhook} CPU ms (1 endpoint) | | |`,
        `| fan-out rounds (${f.rounds.perSecond.join(', ')}/s) | lowest **${f.rounds.lowestOfMedian}**, highest **${f.rounds.highestOfMedian}** of the median | | | within 0.8-1.2 |`,
      );
      if (f.oneOrdered) {
        lines.push(
          `| fan-out, one of the ${f.endpoints} endpoints ordered per resource | ${f.oneOrdered.webhooksPerSecond} webhooks/s, ${f.oneOrdered.cpuMsPerWebhook} CPU ms per webhook, p99 ${f.oneOrdered.service.latencyP99Ms} ms | ${f.webhooksPerSecond}/s (none ordered) | | |`,
        );
      }
    }
  }
  if (x.balancesAsOf) {
    const v = x.balancesAsOf;
    const f = (p: { meanMs: number; p99: number }) => `mean ${p.meanMs} ms (p99 ${p.p99})`;
    lines.push(
      `| balances page asOf, wallet of ${v.tokens} NFTs, ${v.movements} movements (1 connection) | end: first ${f(v.endFirstPage)}, middle ${f(v.endMiddlePage)}; middle instant: first ${f(v.middleInstantFirstPage)}, middle ${f(v.middleInstantMiddlePage)} | now: ${f(v.currentFirstPage)} | | well under 100 ms |`,
    );
  }
  if (x.chainLedger) {
    const v = x.chainLedger;
    lines.push(
      `| chain ledger, ${v.movements} movements to ${v.wallets} wallets (one transaction each) | record mints ${v.recordMintsMs} ms, repeat ${v.recordRepeatMs} ms, transfers ${v.recordTransfersMs} ms, revert all ${v.revert20kMs} ms | | | |`,
    );
  }
  if (x.fairness) {
    const f = x.fairness;
    const row = (r: FairnessResult) => `p50 ${r.latencyP50Ms} ms, p99 ${r.latencyP99Ms} ms, max ${r.latencyMaxMs} ms`;
    lines.push(
      `| fairness: healthy organization's commit-to-receipt while another's 8 endpoints (${f.slowMs} ms) hold 800 webhooks | ${row(f.oneWorker)} (1 worker); ${row(f.twoWorkers)} (2 workers) | | | each < 2 s |`,
    );
  }
  if (x.largeWallet) {
    for (const [size, v] of Object.entries(x.largeWallet as Record<string, any>)) {
      lines.push(
        `| balances page, wallet of ${Number(size).toLocaleString('en')} NFTs (1 connection) | first page mean ${v.firstPage.meanMs} ms (p99 ${v.firstPage.p99}), middle page mean ${v.middlePage.meanMs} ms (p99 ${v.middlePage.p99}) | | | flat |`,
      );
    }
  }
  lines.push('', `ratios: ${JSON.stringify(x.ratios)}`);
  return lines.join('\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
