/**
 * `npm run bench:chain`: following a chain end to end, on a local anvil (started from
 * node_modules, as the tests do) and a fresh database, with the service as three processes:
 * ROLE=api (set-up only), ROLE=worker (webhook delivery) and ROLE=indexer (the follower and the
 * metadata worker). Webhooks go to a signature-checking receiver in this process.
 *
 * 1. backfill: 10,000 ERC-721 mints over 1,000 blocks (10 per block, one `mintMany` each) to
 *    1,000 watched wallets, all on chain before the indexer starts at their first block with
 *    CHAIN_CONFIRMATIONS=0. Measured from the indexer's spawn: every movement recorded (10,000
 *    chain transactions), every `transaction` webhook received, and every webhook received (the
 *    `nft` create of each new token too).
 * 2. steady: anvil mines a block every second; 50 mints/s to the watched wallets for
 *    BENCH_CHAIN_STEADY_S seconds. Per movement: block-to-webhook (from the moment this process
 *    first sees the block at the node, polling every 10 ms), send-to-webhook, and the time from
 *    the block's own timestamp (whole seconds, so up to 1 s early); the delivery engine's share
 *    split at the event's relay and judging marks. Run alone (BENCH_CHAIN_ONLY=steady), no
 *    backfill chain is built: the indexer starts at the head, so the steady phase does not share
 *    the machine with a backfill's 20,000 webhooks.
 *
 * The service reaches anvil over WebSocket by default (BENCH_CHAIN_RPC=ws: new heads pushed, the
 * poll as fallback) or over HTTP (BENCH_CHAIN_RPC=http: the poll alone), on the same port.
 *
 * The tokens have no token URI (empty base URI): the metadata worker runs as in production (one
 * eth_call and one update per new token) but no metadata update webhook is sent.
 *
 * Environment (all optional): BENCH_DATABASE_BASE_URL (postgresql://postgres@127.0.0.1:5432),
 * REDIS_URL, BENCH_CHAIN_WEBHOOK_TYPES (transaction,nft), BENCH_CHAIN_TRANSFERS (10000),
 * BENCH_CHAIN_BLOCKS (1000), BENCH_CHAIN_WALLETS (1000), BENCH_CHAIN_STEADY_RATE (50),
 * BENCH_CHAIN_STEADY_S (30), BENCH_CHAIN_POLL_MS (250, the indexer's CHAIN_POLL_INTERVAL_MS),
 * BENCH_CHAIN_ONLY (backfill,steady), BENCH_CHAIN_RPC (ws or http; ws), BENCH_CHAIN_MAX_IN_FLIGHT (the receiver's
 * endpoint maxInFlight, 200, or `default` for the service's default), BENCH_KEEP_DB=1, BENCH_CPU_PROF=<dir> (a CPU profile
 * of each service process), BENCH_NODE_FLAGS (their node flags; `npm start`'s by default); the service tuning variables
 * WEBHOOK_CONCURRENCY, WEBHOOK_PER_RECEIVER_CONCURRENCY, WEBHOOK_PER_ORGANIZATION_CONCURRENCY and DB_POOL_MAX are passed on.
 * Results: bench/results/chain-<ISO time>.json and a Markdown table on stdout.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { Address, Hash } from 'viem';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { ERC721_ABI, LocalChain } from '../test/support/evm';
import { cpuProfileEnv, freePort, percentile, round, serviceNodeArgs, sleep } from './bench-kit';

const ROOT = resolve(__dirname, '..');
const env = process.env;
const TRANSFERS = Number(env.BENCH_CHAIN_TRANSFERS ?? 10_000);
const BLOCKS = Number(env.BENCH_CHAIN_BLOCKS ?? 1_000);
const WALLETS = Number(env.BENCH_CHAIN_WALLETS ?? 1_000);
const STEADY_RATE = Number(env.BENCH_CHAIN_STEADY_RATE ?? 50);
const STEADY_S = Number(env.BENCH_CHAIN_STEADY_S ?? 30);
const POLL_MS = Number(env.BENCH_CHAIN_POLL_MS ?? 250);
/** The integrator's subscription: `transaction` alone halves the webhooks of the backfill. */
const WEBHOOK_TYPES = (env.BENCH_CHAIN_WEBHOOK_TYPES ?? 'transaction,nft').split(',');
const ONLY = new Set((env.BENCH_CHAIN_ONLY ?? 'backfill,steady').split(','));
/** The receiver's endpoint `maxInFlight` (BENCH_CHAIN_MAX_IN_FLIGHT, 200); `default` leaves it unset (the service's default). */
const MAX_IN_FLIGHT = (env.BENCH_CHAIN_MAX_IN_FLIGHT ?? '200') === 'default' ? null : Number(env.BENCH_CHAIN_MAX_IN_FLIGHT ?? 200);
const RPC = env.BENCH_CHAIN_RPC ?? 'ws';
if (RPC !== 'ws' && RPC !== 'http') throw new Error(`BENCH_CHAIN_RPC must be ws or http, not ${RPC}`);
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN_ID = `${Date.now().toString(36)}${process.pid}`;
const OPERATOR_KEY = randomBytes(24).toString('hex');
const SHARED_SECRET = randomBytes(24).toString('hex');
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const CHAIN_ID = 31337;

const log = (message: string) => process.stderr.write(`[chain ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// ---------------------------------------------------------------- service processes

let logFd: number | null = null;
/** The services' own output (warnings and errors, LOG_LEVEL=warn) goes to a file, not the table. */
function serviceLog(): number {
  if (logFd === null) {
    const path = join(tmpdir(), `nftw-bench-chain-${RUN_ID}.log`);
    logFd = openSync(path, 'a');
    log(`service output: ${path}`);
  }
  return logFd;
}

type Role = 'api' | 'worker' | 'indexer';

class Service {
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly role: Role,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * One service process from the TypeScript sources (ts-node with swc: compiled once at start,
   * the same JavaScript as a build), so the bench never races a `nest build` in the same tree.
   */
  static spawn(role: Role, databaseUrl: string, extra: Record<string, string> = {}): Promise<Service> {
    return freePort().then((port) => {
      const child = spawn(process.execPath, [...serviceNodeArgs(), '-r', 'ts-node/register', join(ROOT, 'src/main.ts')], {
        cwd: ROOT,
        stdio: ['ignore', serviceLog(), serviceLog()],
        env: {
          PATH: env.PATH,
          TS_NODE_SWC: 'true',
          TS_NODE_TRANSPILE_ONLY: 'true',
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          PORT: String(port),
          ROLE: role,
          DATABASE_URL: databaseUrl,
          REDIS_URL,
          QUEUE_PREFIX: `benchchain${RUN_ID}`,
          DB_MIGRATE_ON_START: 'false',
          SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY,
          OPERATOR_API_KEY: OPERATOR_KEY,
          AUDIT_CHAIN_KEY: ENCRYPTION_KEY,
          MEDIA_SIGNING_KEY: ENCRYPTION_KEY,
          METRICS_TOKEN: OPERATOR_KEY,
          WEBHOOK_ALLOW_HTTP: 'true',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
          RATE_LIMIT_PER_KEY: '10000000',
          RATE_LIMIT_PER_IP: '10000000',
          ...cpuProfileEnv(),
          // Delivery tuning passed on as `npm run bench` does.
          ...Object.fromEntries(
            Object.entries(env).filter(
              (e): e is [string, string] =>
                /^(WEBHOOK_CONCURRENCY|WEBHOOK_PER_RECEIVER_CONCURRENCY|WEBHOOK_PER_ORGANIZATION_CONCURRENCY|DB_POOL_MAX)$/.test(e[0]) &&
                e[1] !== undefined,
            ),
          ),
          ...extra,
        },
      });
      return new Service(child, port, role);
    });
  }

  async ready(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`service (${this.role}) exited with ${this.child.exitCode}`);
      try {
        const res = await fetch(`${this.url}/health/ready`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`service (${this.role}) not ready in ${timeoutMs} ms`);
      await sleep(50);
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

// ---------------------------------------------------------------- the integrator's receiver

/** Checks every signature (as an integrator must) and keeps the first receipt time per webhook. */
class Receiver {
  /** resourceId of each Transaction create -> receipt time (ms since epoch). */
  readonly transactions = new Map<string, number>();
  readonly seen = new Set<string>();
  byType = new Map<string, number>();
  badSignatures = 0;
  lastAt = 0;
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hooks`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const now = Date.now();
        const raw = Buffer.concat(chunks);
        const expected = createHmac('sha256', SHARED_SECRET).update(raw).digest('base64');
        if (req.headers['x-service-webhook-hmac'] !== expected) {
          this.badSignatures += 1;
          res.writeHead(401).end();
          return;
        }
        const body = JSON.parse(raw.toString('utf8')) as { id: string; resourceType: string; resourceId: string; action: string };
        if (!this.seen.has(body.id)) {
          this.seen.add(body.id);
          const type = `${body.resourceType}.${body.action}`;
          this.byType.set(type, (this.byType.get(type) ?? 0) + 1);
          if (type === 'Transaction.create') this.transactions.set(body.resourceId, now);
          this.lastAt = now;
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return this;
  }

  count(type: string): number {
    return this.byType.get(type) ?? 0;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

// ---------------------------------------------------------------- scenarios

async function chainRows(db: Client, fromBlock = 0): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from "nft_transaction" where "chain_id" = $1 and "status" = 'confirmed' and "block_number" >= $2`,
    [CHAIN_ID, fromBlock],
  );
  return rows[0].n;
}

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 20): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return Date.now();
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

interface Backfill {
  transfers: number;
  blocks: number;
  wallets: number;
  buildChainS: number;
  /** Seconds from the indexer's spawn, as every figure below. */
  indexerReadyS: number;
  /** The follower's cursor row appeared: it is at work (the process start is behind it). */
  followerStartedS: number;
  firstRowS: number;
  allRecordedS: number;
  allTransactionWebhooksS: number;
  allWebhooksS: number;
  webhooks: Record<string, number>;
  recordedPerSecond: number;
  /** Both webhooks of every movement over the time from the first row to the last webhook. */
  webhooksPerSecond: number;
}

/** The mints of the backfill: block i mints ids i*perBlock+1.. to wallets in turn. */
async function buildBackfillChain(chain: LocalChain, nft: Address, wallets: Address[]): Promise<{ firstBlock: number; seconds: number }> {
  const perBlock = Math.ceil(TRANSFERS / BLOCKS);
  const started = Date.now();
  const firstBlock = (await chain.blockNumber()) + 1;
  let minted = 0;
  // Mined by hand: exactly one mintMany per block (automine may put two sends in one block).
  await chain.setAutomine(false);
  for (let block = 0; block < BLOCKS && minted < TRANSFERS; block++) {
    const count = Math.min(perBlock, TRANSFERS - minted);
    const to = Array.from({ length: count }, (_, j) => wallets[(minted + j) % wallets.length]);
    await chain.send(nft, ERC721_ABI, 'mintMany', [to, BigInt(minted + 1)]);
    await chain.mine(1);
    minted += count;
  }
  await chain.setAutomine(true);
  const last = await chain.blockNumber();
  log(`chain built: ${minted} mints in blocks ${firstBlock}..${last} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return { firstBlock, seconds: (Date.now() - started) / 1000 };
}

/**
 * Watches the backfill from the indexer's spawn: when it answers ready, when its follower takes
 * the chain (its cursor row appears), the first and the last movement recorded, the last
 * `transaction` webhook and the last webhook of all.
 */
async function backfill(db: Client, indexer: Service, receiver: Receiver, spawnedAt: number, buildSeconds: number): Promise<Backfill> {
  const marks: Record<string, number> = {};
  const mark = (name: string, reached: boolean) => {
    if (reached && marks[name] === undefined) marks[name] = Date.now();
  };
  const ready = indexer.ready().then(() => mark('ready', true));
  const deadline = Date.now() + 300_000;
  while (marks.allWebhooks === undefined) {
    if (Date.now() > deadline)
      throw new Error(`backfill not done in 300 s: ${JSON.stringify(marks)}, ${JSON.stringify([...receiver.byType])}`);
    if (marks.follower === undefined) {
      const cursor = await db.query(`select 1 from "chain_cursor" where "chain_id" = $1`, [CHAIN_ID]);
      mark('follower', (cursor.rowCount ?? 0) > 0);
    }
    if (marks.allRecorded === undefined) {
      const rows = await chainRows(db);
      mark('firstRow', rows > 0);
      mark('allRecorded', rows >= TRANSFERS);
    }
    const transactions = receiver.count('Transaction.create') >= TRANSFERS;
    mark('allTransactionWebhooks', transactions);
    mark('allWebhooks', transactions && (!WEBHOOK_TYPES.includes('nft') || receiver.count('Token.create') >= TRANSFERS));
    await sleep(25);
  }
  await ready;
  const s = (at: number | undefined) => (at === undefined ? NaN : round((at - spawnedAt) / 1000));
  return {
    transfers: TRANSFERS,
    blocks: BLOCKS,
    wallets: WALLETS,
    buildChainS: round(buildSeconds),
    indexerReadyS: s(marks.ready),
    followerStartedS: s(marks.follower),
    firstRowS: s(marks.firstRow),
    allRecordedS: s(marks.allRecorded),
    allTransactionWebhooksS: s(marks.allTransactionWebhooks),
    allWebhooksS: s(marks.allWebhooks),
    webhooks: Object.fromEntries(receiver.byType),
    recordedPerSecond: round(TRANSFERS / ((marks.allRecorded - marks.follower) / 1000), 0),
    webhooksPerSecond: round(receiver.seen.size / ((marks.allWebhooks - marks.firstRow) / 1000), 0),
  };
}

interface Steady {
  rate: number;
  seconds: number;
  sent: number;
  recorded: number;
  blockToWebhookMs: { p50: number; p99: number; max: number };
  sendToWebhookMs: { p50: number; p99: number; max: number };
  blockTimestampToWebhookMs: { p50: number; p99: number; max: number };
  /** The follower's share: block seen at the node to the movement's row committed. */
  blockToRecordedMs: { p50: number; p99: number; max: number };
  /** The delivery engine's share: row committed to webhook received. */
  recordedToWebhookMs: { p50: number; p99: number; max: number };
  /** Its parts: the event written to its relay into the queue, relayed to judged into its webhook, judged to received. */
  recordedToRelayedMs: { p50: number; p99: number; max: number };
  relayedToJudgedMs: { p50: number; p99: number; max: number };
  judgedToWebhookMs: { p50: number; p99: number; max: number };
  /** Transaction sent to the node until its movement's row is committed (Ponder's send-to-row). */
  sendToRecordedMs: { p50: number; p99: number; max: number };
  pollIntervalMs: number;
  rpc: string;
}

const summary = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) });

async function steady(chain: LocalChain, db: Client, nft: Address, wallets: Address[], receiver: Receiver): Promise<Steady> {
  await chain.setAutomine(false);
  await chain.setIntervalMining(1);
  // When this process first sees each block at the node.
  const seenAt = new Map<number, number>();
  let observing = true;
  let lastSeen = await chain.blockNumber();
  const observer = (async () => {
    while (observing) {
      // A refused or reset poll (the node is busy mining) only delays the next look.
      const n = await chain.blockNumber().catch(() => lastSeen);
      for (let b = lastSeen + 1; b <= n; b++) seenAt.set(b, Date.now());
      lastSeen = Math.max(lastSeen, n);
      await sleep(10);
    }
  })();
  const fromBlock = lastSeen + 1;
  const sentAt = new Map<Hash, number>();
  const baseline = receiver.transactions.size;
  const total = STEADY_RATE * STEADY_S;
  const started = Date.now();
  log(`steady: ${total} mints at ${STEADY_RATE}/s on 1-second blocks`);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / STEADY_RATE;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    const before = Date.now();
    const hash = await chain.send(nft, ERC721_ABI, 'mint', [wallets[i % wallets.length], BigInt(10_000_000 + i)]);
    sentAt.set(hash, before);
  }
  log('steady: all sent; waiting for their webhooks');
  await waitFor('steady webhooks', () => receiver.transactions.size >= baseline + total, 120_000, 50);
  observing = false;
  await observer;

  const { rows } = await db.query<{ id: string; block_number: string; transaction_hash: string }>(
    `select "id", "block_number"::text, "transaction_hash" from "nft_transaction"
      where "chain_id" = $1 and "status" = 'confirmed' and "block_number" >= $2`,
    [CHAIN_ID, fromBlock],
  );
  // When each movement was recorded: its `transaction` create event is written in the same
  // database transaction (created_at is the recording step's clock, on this machine), then
  // marked when the relay queued it and when the worker judged it into its webhook.
  const events = (
    await db.query<{ resource_id: string; at: Date; relayed_at: Date | null; processed_at: Date | null }>(
      `select "resource_id", "created_at" as "at", "relayed_at", "processed_at" from "domain_event"
        where "resource_type" = 'Transaction' and "action" = 'create' and "resource_id" = any($1::uuid[])`,
      [rows.map((r) => r.id)],
    )
  ).rows;
  const recordedAt = new Map(events.map((r) => [r.resource_id, r.at.getTime()]));
  const relayedAt = new Map(events.filter((r) => r.relayed_at).map((r) => [r.resource_id, r.relayed_at!.getTime()]));
  const judgedAt = new Map(events.filter((r) => r.processed_at).map((r) => [r.resource_id, r.processed_at!.getTime()]));
  const blockTimes = new Map<number, number>();
  for (const block of new Set(rows.map((r) => Number(r.block_number)))) {
    const b = await chain.publicClient.getBlock({ blockNumber: BigInt(block) });
    blockTimes.set(block, Number(b.timestamp) * 1000);
  }
  const fromBlockSeen: number[] = [];
  const fromSend: number[] = [];
  const fromTimestamp: number[] = [];
  const blockToRecorded: number[] = [];
  const recordedToWebhook: number[] = [];
  const sendToRecorded: number[] = [];
  const recordedToRelayed: number[] = [];
  const relayedToJudged: number[] = [];
  const judgedToWebhook: number[] = [];
  for (const row of rows) {
    const received = receiver.transactions.get(row.id);
    if (received === undefined) continue;
    const block = Number(row.block_number);
    const seen = seenAt.get(block);
    if (seen !== undefined) fromBlockSeen.push(received - seen);
    const recorded = recordedAt.get(row.id);
    if (recorded !== undefined && seen !== undefined) blockToRecorded.push(recorded - seen);
    if (recorded !== undefined) recordedToWebhook.push(received - recorded);
    const relayed = relayedAt.get(row.id);
    const judged = judgedAt.get(row.id);
    if (recorded !== undefined && relayed !== undefined) recordedToRelayed.push(relayed - recorded);
    if (relayed !== undefined && judged !== undefined) relayedToJudged.push(judged - relayed);
    if (judged !== undefined) judgedToWebhook.push(received - judged);
    const sent = sentAt.get(row.transaction_hash as Hash);
    if (sent !== undefined) fromSend.push(received - sent);
    if (sent !== undefined && recorded !== undefined) sendToRecorded.push(recorded - sent);
    fromTimestamp.push(received - blockTimes.get(block)!);
  }
  await chain.setIntervalMining(0);
  await chain.setAutomine(true);
  return {
    rate: STEADY_RATE,
    seconds: STEADY_S,
    sent: total,
    recorded: rows.length,
    blockToWebhookMs: summary(fromBlockSeen),
    sendToWebhookMs: summary(fromSend),
    blockTimestampToWebhookMs: summary(fromTimestamp),
    blockToRecordedMs: summary(blockToRecorded),
    recordedToWebhookMs: summary(recordedToWebhook),
    recordedToRelayedMs: summary(recordedToRelayed),
    relayedToJudgedMs: summary(relayedToJudged),
    judgedToWebhookMs: summary(judgedToWebhook),
    sendToRecordedMs: summary(sendToRecorded),
    pollIntervalMs: POLL_MS,
    rpc: RPC,
  };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const startedAt = new Date();
  const base = new URL(env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_bench_chain_${RUN_ID}`;
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

  const services: Service[] = [];
  let chain: LocalChain | null = null;
  const receiver = await new Receiver().start();
  const result: Record<string, unknown> = {
    startedAt: startedAt.toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    settings: { TRANSFERS, BLOCKS, WALLETS, STEADY_RATE, STEADY_S, POLL_MS, WEBHOOK_TYPES, RPC, MAX_IN_FLIGHT },
    loadAverageAtStart: loadavg(),
  };
  try {
    chain = await LocalChain.start();
    const nft = await chain.deployErc721({ name: 'Bench', symbol: 'BNCH', baseUri: '' });
    // anvil answers HTTP and WebSocket on one port.
    const rpcUrl = RPC === 'ws' ? `ws://127.0.0.1:${chain.port}` : chain.rpcUrl;
    const chainEnv = {
      CHAIN_RPC_URLS: `${CHAIN_ID}=${rpcUrl}`,
      CHAIN_CONFIRMATIONS: '0',
      CHAIN_POLL_INTERVAL_MS: String(POLL_MS),
    };

    const apiService = await Service.spawn('api', databaseUrl, chainEnv);
    const worker = await Service.spawn('worker', databaseUrl, chainEnv);
    services.push(apiService, worker);
    await Promise.all([apiService.ready(), worker.ready()]);

    const org = await api<{ id: string }>(apiService, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name: 'bench chain' });
    const { key } = await api<{ key: string }>(apiService, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, OPERATOR_KEY, {
      name: 'bench',
      roles: ['admin'],
    });
    await api(apiService, 'PATCH', '/api/organization/v1/current-organization/webhook-config', key, {
      url: receiver.url,
      sharedSecret: SHARED_SECRET,
      webhookTypes: WEBHOOK_TYPES,
      enabled: true,
    });
    if (MAX_IN_FLIGHT !== null) {
      // The configuration's endpoint is the organization's default one, whose id is the organization's.
      await api(apiService, 'PATCH', `/api/organization/v1/current-organization/webhook-endpoints/${org.id}`, key, {
        maxInFlight: MAX_IN_FLIGHT,
      });
    }
    const wallets: Address[] = Array.from({ length: WALLETS }, (): Address => `0x${randomBytes(20).toString('hex')}`);
    log(`creating ${WALLETS} watched wallets`);
    for (let i = 0; i < wallets.length; i += 20) {
      await Promise.all(
        wallets.slice(i, i + 20).map((address, j) => api(apiService, 'POST', '/v1/wallets', key, { name: `watched ${i + j}`, address })),
      );
    }

    if (ONLY.has('backfill')) {
      const { firstBlock, seconds: buildSeconds } = await buildBackfillChain(chain, nft, wallets);
      // The indexer starts at the first minted block: everything is a backfill.
      const spawnedAt = Date.now();
      const indexer = await Service.spawn('indexer', databaseUrl, { ...chainEnv, CHAIN_START_BLOCK: String(firstBlock) });
      services.push(indexer);
      result.backfill = await backfill(db, indexer, receiver, spawnedAt, buildSeconds);
      log(`backfill: ${JSON.stringify(result.backfill)}`);
      // Let the metadata worker finish the new tokens so it does not weigh on the steady run.
      await waitFor(
        'metadata settled',
        async () => (await db.query(`select 1 from "token" where "metadata_status" = 'pending' limit 1`)).rowCount === 0,
        300_000,
        200,
      );
    } else {
      // Following from the head at its first start, as soon as it holds the chain.
      const indexer = await Service.spawn('indexer', databaseUrl, chainEnv);
      services.push(indexer);
      await indexer.ready();
      await waitFor(
        'the follower holding the chain',
        async () =>
          (await db.query(`select 1 from "chain_cursor" where "chain_id" = $1 and "applied_block" is not null`, [CHAIN_ID])).rowCount === 1,
        60_000,
        50,
      );
    }

    if (ONLY.has('steady')) {
      result.steady = await steady(chain, db, nft, wallets, receiver);
      log(`steady: ${JSON.stringify(result.steady)}`);
    }
    result.badSignatures = receiver.badSignatures;
    result.loadAverageAtEnd = loadavg();
  } finally {
    await Promise.all(services.map((s) => s.stop()));
    await receiver.stop();
    await chain?.stop();
    await db.end();
    await dropEverything(databaseUrl);
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const file = join(ROOT, 'bench/results', `chain-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2));
  log(`wrote ${file}`);
  process.stdout.write(`${table(result)}\n`);
}

async function dropEverything(databaseUrl: string): Promise<void> {
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `benchchain${RUN_ID}:*`, 'COUNT', 1000);
      cursor = next;
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
  const lines = ['| scenario | figure | goal |', '|---|---|---|'];
  const b = r.backfill as Backfill | undefined;
  if (b) {
    const following = (at: number) => round(at - b.followerStartedS);
    lines.push(
      `| backfill: ${b.transfers.toLocaleString('en')} mints over ${b.blocks.toLocaleString('en')} blocks to ${b.wallets.toLocaleString('en')} watched wallets | ` +
        `from the follower's start: all recorded ${following(b.allRecordedS)} s, all transaction webhooks ${following(b.allTransactionWebhooksS)} s, ` +
        `all webhooks (types ${WEBHOOK_TYPES.join(', ')}) ${following(b.allWebhooksS)} s; ${b.recordedPerSecond} movements/s recorded, ${b.webhooksPerSecond} webhooks/s delivered | < 10 s |`,
      `| (same run) | from the indexer's spawn: ready ${b.indexerReadyS} s, follower started ${b.followerStartedS} s, first row ${b.firstRowS} s, ` +
        `all recorded ${b.allRecordedS} s, all webhooks ${b.allWebhooksS} s | |`,
    );
  }
  const s = r.steady as Steady | undefined;
  if (s) {
    const f = (x: { p50: number; p99: number; max: number }) => `p50 ${x.p50} ms, p99 ${x.p99} ms, max ${x.max} ms`;
    lines.push(
      `| steady ${s.rate} mints/s for ${s.seconds} s, 1-second blocks, confirmations 0, poll ${s.pollIntervalMs} ms, node over ${s.rpc} | block-to-webhook ${f(s.blockToWebhookMs)} | p99 < 2 s |`,
      `| (same run) | send-to-webhook ${f(s.sendToWebhookMs)}; from the block's timestamp ${f(s.blockTimestampToWebhookMs)} | p99 <= block time + 150 ms |`,
      `| (same run) | block-to-recorded ${f(s.blockToRecordedMs)}; recorded-to-webhook ${f(s.recordedToWebhookMs)}; send-to-recorded ${f(s.sendToRecordedMs)} | |`,
      `| (same run) | recorded-to-relayed ${f(s.recordedToRelayedMs)}; relayed-to-judged ${f(s.relayedToJudgedMs)}; judged-to-webhook ${f(s.judgedToWebhookMs)} | |`,
    );
  }
  return lines.join('\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
