/**
 * `npm run bench:contract-index`: the whole-contract index on a local anvil and a fresh database,
 * the service as one ROLE=all process (API and indexer).
 *
 * 1. indexing: an ERC-721 with BENCH_CI_INDEX_TRANSFERS (100,000) mints in
 *    BENCH_CI_INDEX_TRANSACTIONS (10,500) `mintMany` transactions, which the node mines in about
 *    10,000 blocks (the blocks are counted), all on chain before the contract is registered
 *    with CHAIN_CONFIRMATIONS=0. Measured: from POST /v1/contracts to the contract answering
 *    `status: live` at the head.
 * 2. holders: a second ERC-721 with BENCH_CI_READ_TRANSFERS (200,000) mints in
 *    BENCH_CI_READ_TRANSACTIONS (2,000) transactions to BENCH_CI_HOLDERS (10,000) addresses in turn, indexed
 *    the same way; then the first page (100 holders) at past blocks (a quarter, half and nine
 *    tenths of the range), BENCH_CI_READS (50) times each, over keep-alive HTTP. Baselines in the
 *    same run: the same page's SQL sent straight to PostgreSQL with `pg` (no HTTP, no framework),
 *    and GET /health/live (the HTTP floor of this process).
 *
 * Environment (all optional): BENCH_DATABASE_BASE_URL (postgresql://postgres@127.0.0.1:5432),
 * REDIS_URL, the BENCH_CI_* figures above, BENCH_CI_ONLY (indexing,holders), BENCH_KEEP_DB=1.
 * Results: bench/results/contract-index-<ISO time>.json and a Markdown table on stdout.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';

import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { Address, encodeFunctionData } from 'viem';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { ERC721_ABI, LocalChain } from '../test/support/evm';
import { freePort, percentile, round, sleep } from './bench-kit';

const ROOT = resolve(__dirname, '..');
const env = process.env;
const INDEX_TRANSFERS = Number(env.BENCH_CI_INDEX_TRANSFERS ?? 100_000);
const INDEX_TRANSACTIONS = Number(env.BENCH_CI_INDEX_TRANSACTIONS ?? 10_500);
const READ_TRANSFERS = Number(env.BENCH_CI_READ_TRANSFERS ?? 200_000);
const READ_TRANSACTIONS = Number(env.BENCH_CI_READ_TRANSACTIONS ?? 2_000);
const HOLDERS = Number(env.BENCH_CI_HOLDERS ?? 10_000);
const READS = Number(env.BENCH_CI_READS ?? 50);
const ONLY = new Set((env.BENCH_CI_ONLY ?? 'indexing,holders').split(','));
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN_ID = `${Date.now().toString(36)}${process.pid}`;
const OPERATOR_KEY = randomBytes(24).toString('hex');
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const CHAIN_ID = 31337;

const log = (message: string) => process.stderr.write(`[contract-index ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** The service (ROLE=all) from the TypeScript sources, as bench/chain.ts runs it. */
async function spawnService(databaseUrl: string, extra: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const out = openSync(join(tmpdir(), `nftw-bench-contract-index-${RUN_ID}.log`), 'a');
  const child = spawn(process.execPath, ['-r', 'ts-node/register', join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    env: {
      PATH: env.PATH,
      TS_NODE_SWC: 'true',
      TS_NODE_TRANSPILE_ONLY: 'true',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      ROLE: 'all',
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: `benchci${RUN_ID}`,
      DB_MIGRATE_ON_START: 'false',
      SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY,
      OPERATOR_API_KEY: OPERATOR_KEY,
      AUDIT_CHAIN_KEY: ENCRYPTION_KEY,
      MEDIA_SIGNING_KEY: ENCRYPTION_KEY,
      METRICS_TOKEN: OPERATOR_KEY,
      RATE_LIMIT_PER_KEY: '10000000',
      RATE_LIMIT_PER_IP: '10000000',
      ...extra,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health/ready`)).ok) return { child, url };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('service not ready in 90 s');
    await sleep(50);
  }
}

async function api<T>(url: string, method: string, path: string, key: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** JSON-RPC calls to the node in one HTTP request, with a generous timeout: building the chain must survive a loaded machine. */
async function rpcBatch(chain: LocalChain, calls: { method: string; params: unknown[] }[]): Promise<void> {
  const res = await fetch(chain.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
    signal: AbortSignal.timeout(300_000),
  });
  const answers = (await res.json()) as { error?: { message: string } }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`node refused a call: ${failed.error!.message}`);
}

/** Waits until the node has mined every transaction it was sent. */
async function drained(chain: LocalChain): Promise<void> {
  for (;;) {
    const status = (await chain.request('txpool_status')) as { pending: string; queued: string };
    if (Number(status.pending) + Number(status.queued) === 0) return;
    await sleep(10);
  }
}

/**
 * `transfers` mints in `transactions` `mintMany` transactions, to `holders` in turn, sent one
 * after another under automine (the node mines as they arrive, now and then two in one block).
 * The blocks they took are measured, not assumed.
 */
async function buildChain(
  chain: LocalChain,
  nft: Address,
  transfers: number,
  transactions: number,
  holders: Address[],
): Promise<{ first: number; last: number }> {
  const started = Date.now();
  const perTransaction = Math.ceil(transfers / transactions);
  // A fixed gas limit: no estimate per transaction.
  const gas = `0x${(60_000 * perTransaction + 100_000).toString(16)}`;
  const from = chain.accounts[0];
  const first = (await chain.blockNumber()) + 1;
  for (let minted = 0; minted < transfers; minted += perTransaction) {
    const count = Math.min(perTransaction, transfers - minted);
    const to = Array.from({ length: count }, (_, j) => holders[(minted + j) % holders.length]);
    const data = encodeFunctionData({ abi: ERC721_ABI, functionName: 'mintMany', args: [to, BigInt(minted + 1)] });
    await rpcBatch(chain, [{ method: 'eth_sendTransaction', params: [{ from, to: nft, data, gas }] }]);
    // The node answers before it has mined, and mines slowly with thousands waiting: keep its pool short.
    if ((minted / perTransaction) % 100 === 99) await drained(chain);
  }
  await drained(chain);
  const last = await chain.blockNumber();
  log(`chain built: ${transfers} mints in blocks ${first}..${last} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return { first, last };
}

interface ContractView {
  id: string;
  status: string;
  indexedBlock: number;
}

/** Registers the contract and waits until it is live at `head`; the seconds from the POST. */
async function indexToLive(
  url: string,
  key: string,
  nft: Address,
  fromBlock: number,
  head: number,
): Promise<{ id: string; seconds: number }> {
  const started = Date.now();
  const contract = await api<ContractView>(url, 'POST', '/v1/contracts', key, { chainId: CHAIN_ID, address: nft, fromBlock });
  const deadline = Date.now() + 300_000;
  for (;;) {
    const view = await api<ContractView>(url, 'GET', `/v1/contracts/${contract.id}`, key);
    if (view.status === 'live' && view.indexedBlock >= head) break;
    if (Date.now() > deadline) throw new Error(`not live in 300 s: ${JSON.stringify(view)}`);
    await sleep(20);
  }
  return { id: contract.id, seconds: (Date.now() - started) / 1000 };
}

async function timed(times: number, call: () => Promise<unknown>): Promise<{ p50: number; p95: number; max: number }> {
  for (let i = 0; i < 3; i++) await call(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await call();
    ms.push(performance.now() - t0);
  }
  return { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), max: round(Math.max(...ms)) };
}

/** The holders page's two statements, sent straight to PostgreSQL: the floor under the HTTP answer. */
async function rawHoldersPage(db: Client, contractId: string, block: number, limit: number): Promise<number> {
  const cp = await db.query<{ block: string | null }>(
    `select max("block_number") as "block" from "indexed_contract_checkpoint" where "contract_id" = $1 and "block_number" <= $2`,
    [contractId, block],
  );
  const checkpoint = cp.rows[0].block === null ? -1 : Number(cp.rows[0].block);
  const rows = await db.query(
    `with "rows" as (
       select "holder", "token_count", "amount", -1::bigint as "block_number" from "indexed_contract_checkpoint"
       where "contract_id" = $1 and "block_number" = $2
       union all
       select "holder", "token_count", "amount", "block_number" from "indexed_contract_holder_change"
       where "contract_id" = $1 and "block_number" > $2 and "block_number" <= $3
     ), "latest" as (
       select distinct on ("holder") "holder", "token_count", "amount" from "rows" order by "holder", "block_number" desc
     )
     select l."holder", l."token_count", l."amount"::text from "latest" l where l."amount" > 0 order by l."amount" desc, l."holder" limit $4`,
    [contractId, checkpoint, block, limit],
  );
  return rows.rowCount ?? 0;
}

async function main(): Promise<void> {
  const base = new URL(env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_bench_ci_${RUN_ID}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl })));
  try {
    await runMigrations(orm, databaseUrl);
  } finally {
    await orm.close(true);
  }
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const result: Record<string, unknown> = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    settings: { INDEX_TRANSFERS, INDEX_TRANSACTIONS, READ_TRANSFERS, READ_TRANSACTIONS, HOLDERS, READS },
    loadAverageAtStart: loadavg(),
  };
  let chain: LocalChain | null = null;
  let service: { child: ChildProcess; url: string } | null = null;
  try {
    chain = await LocalChain.start({ chainId: CHAIN_ID });
    const holders: Address[] = Array.from({ length: HOLDERS }, (): Address => `0x${randomBytes(20).toString('hex')}`);
    const indexNft = ONLY.has('indexing') ? await chain.deployErc721({ name: 'Index', symbol: 'IDX' }) : null;
    const readNft = ONLY.has('holders') ? await chain.deployErc721({ name: 'Read', symbol: 'READ' }) : null;
    const indexRange = indexNft ? await buildChain(chain, indexNft, INDEX_TRANSFERS, INDEX_TRANSACTIONS, holders) : null;
    const readRange = readNft ? await buildChain(chain, readNft, READ_TRANSFERS, READ_TRANSACTIONS, holders) : null;

    service = await spawnService(databaseUrl, {
      CHAIN_RPC_URLS: `${CHAIN_ID}=${chain.rpcUrl}`,
      CHAIN_CONFIRMATIONS: '0',
      CHAIN_POLL_INTERVAL_MS: '250',
    });
    const org = await api<{ id: string }>(service.url, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name: 'bench contract index' });
    const { key } = await api<{ key: string }>(service.url, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, OPERATOR_KEY, {
      name: 'bench',
      roles: ['admin'],
    });
    const head = await chain.blockNumber();

    if (indexNft && indexRange) {
      const { seconds } = await indexToLive(service.url, key, indexNft, indexRange.first, head);
      const blocks = indexRange.last - indexRange.first + 1;
      log(`indexing: ${INDEX_TRANSFERS} transfers over ${blocks} blocks, registration to live in ${seconds.toFixed(2)} s`);
      result.indexing = { transfers: INDEX_TRANSFERS, blocks, registrationToLiveSeconds: round(seconds) };
    }
    if (readNft && readRange) {
      const { id, seconds } = await indexToLive(service.url, key, readNft, readRange.first, head);
      log(`holders set: ${READ_TRANSFERS} transfers indexed in ${seconds.toFixed(2)} s`);
      const span = readRange.last - readRange.first;
      const points: Record<string, unknown> = {};
      for (const [name, fraction] of [
        ['quarter', 0.25],
        ['half', 0.5],
        ['nineTenths', 0.9],
      ] as const) {
        const block = readRange.first + Math.floor(span * fraction);
        const page = await api<{ holders: unknown[]; nextPageKey: string | null }>(
          service.url,
          'GET',
          `/v1/contracts/${id}/holders?atBlock=${block}`,
          key,
        );
        const http = await timed(READS, () => api(service!.url, 'GET', `/v1/contracts/${id}/holders?atBlock=${block}&pageSize=100`, key));
        const raw = await timed(READS, () => rawHoldersPage(db, id, block, 101));
        points[name] = { block, holdersOnPage: page.holders.length, firstPageMs: http, rawSqlMs: raw, ratio: round(http.p50 / raw.p50) };
        log(`holders at block ${block}: first page p50 ${http.p50} ms, p95 ${http.p95} ms (raw SQL p50 ${raw.p50} ms)`);
      }
      const floor = await timed(READS, async () => (await fetch(`${service!.url}/health/live`)).text());
      const counts = await db.query<{ changes: string; checkpoints: string; holders: string }>(
        `select (select count(*) from "indexed_contract_holder_change" where "contract_id" = $1) as "changes",
           (select count(distinct "block_number") from "indexed_contract_checkpoint" where "contract_id" = $1) as "checkpoints",
           (select count(distinct "holder") from "indexed_contract_balance" where "contract_id" = $1) as "holders"`,
        [id],
      );
      result.holders = {
        transfers: READ_TRANSFERS,
        blocks: readRange.last - readRange.first + 1,
        holdersAtHead: Number(counts.rows[0].holders),
        holderChanges: Number(counts.rows[0].changes),
        checkpoints: Number(counts.rows[0].checkpoints),
        indexedInSeconds: round(seconds),
        points,
        httpFloorMs: floor,
      };
    }
  } finally {
    if (service) {
      service.child.kill('SIGTERM');
      await sleep(2000);
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
    await chain?.stop();
    await db.end();
    if (env.BENCH_KEEP_DB !== '1') {
      const admin = new Client({ connectionString: new URL('/postgres', base).toString() });
      await admin.connect();
      await admin.query(`drop database if exists "${base.pathname.slice(1)}" with (force)`);
      await admin.end();
    }
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const file = join(ROOT, `bench/results/contract-index-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${file}`);
  const lines = ['| measure | figure |', '| --- | --- |'];
  const indexing = result.indexing as { transfers: number; blocks: number; registrationToLiveSeconds: number } | undefined;
  if (indexing)
    lines.push(
      `| ${indexing.transfers} transfers / ${indexing.blocks} blocks: registration to live | ${indexing.registrationToLiveSeconds} s |`,
    );
  const holdersResult = result.holders as
    { points: Record<string, { block: number; firstPageMs: { p50: number; p95: number }; rawSqlMs: { p50: number } }> } | undefined;
  if (holdersResult) {
    for (const [name, p] of Object.entries(holdersResult.points)) {
      lines.push(
        `| holders first page at block ${p.block} (${name}): p50 / p95 (raw SQL p50) | ${p.firstPageMs.p50} / ${p.firstPageMs.p95} ms (${p.rawSqlMs.p50} ms) |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
