/**
 * `npm run bench:media`: token images. An API process and one media worker (a process with
 * ROLE=indexer) on a fresh database, an image host on loopback serving BENCH_MEDIA_IMAGES (1,000) distinct JPEGs of
 * about 1 MiB (one photo-like picture, each copy with its own comment segment: other bytes, the
 * same decoding work). Reports:
 *
 * - thumbnails: the time from the first POST /v1/tokens until every token's media is `ok`, and
 *   the worker's CPU time, and its resident memory before and at its peak (sampled from /proc every
 *   100 ms);
 * - its raw baseline in the same run: a plain loop in this process fetching other copies with
 *   fetch() and making the three WebP widths with a plain sharp pipeline (same quality and effort),
 *   two at a time;
 * - a thumbnail answer (GET /v1/media/{sha256}/{width}.webp, signature checked, bytes from
 *   PostgreSQL): p50/p99 over BENCH_MEDIA_REQUESTS (3,000) requests, 4 at a time, against its raw
 *   baseline, a plain node:http server checking the same HMAC and reading the same row with pg.
 *
 * The goal (docs/IMAGES.md "Images"): 1,000 images in under 60 s on one worker, its RSS up by less
 * than 300 MB, a thumbnail answer's p99 under 10 ms.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Client, Pool } from 'pg';
import sharp from 'sharp';
import { request } from 'undici';
import { MikroORM } from '@mikro-orm/postgresql';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { dropDatabase } from '../test/support/database-admin';
import { runMigrations } from '../src/database/migrate';
import { ENTITIES } from '../src/orm-model';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { freePort, SERVICE_MAIN } from '../test/support/service-process';

const env = process.env;
const IMAGES = Number(env.BENCH_MEDIA_IMAGES ?? 1000);
const BASELINE_IMAGES = Number(env.BENCH_MEDIA_BASELINE_IMAGES ?? 300);
const REQUESTS = Number(env.BENCH_MEDIA_REQUESTS ?? 3000);
const WARM_UP = 20;
const KEY = Buffer.alloc(32, 3).toString('base64');
const OPERATOR_KEY = 'bench-operator-key-0123456789abcdef';
const log = (message: string) => process.stderr.write(`[media ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A photo-like JPEG of about 1 MiB: smooth gradients under fine noise, as a camera gives. */
async function basePicture(): Promise<Buffer> {
  const width = 1800;
  const height = 1350;
  const raw = Buffer.alloc(width * height * 3);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const noise = (seed >> 16) % 56;
      const i = (y * width + x) * 3;
      raw[i] = (x * 200) / width + noise;
      raw[i + 1] = (y * 200) / height + noise;
      raw[i + 2] = ((x + y) * 100) / (width + height) + noise;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 88 })
    .toBuffer();
}

/** The same picture with a comment segment of its own right after SOI: distinct bytes, same pixels. */
function variant(base: Buffer, n: number): Buffer {
  const text = Buffer.from(`bench image ${n}`);
  const segment = Buffer.alloc(4 + text.length);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(text.length + 2, 2);
  text.copy(segment, 4);
  return Buffer.concat([base.subarray(0, 2), segment, base.subarray(2)]);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** CPU seconds (user + system, every thread) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function api<T>(base: string, method: string, path: string, key: string, body?: unknown): Promise<T> {
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as T;
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

async function latencies(paths: string[], base: string): Promise<{ p50: number; p99: number; rps: number }> {
  const times: number[] = [];
  const started = Date.now();
  await pool(
    Array.from({ length: REQUESTS }, (_, i) => paths[i % paths.length]),
    4,
    async (path) => {
      const t0 = process.hrtime.bigint();
      const res = await request(`${base}${path}`);
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode}`);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    },
  );
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 100) / 100;
  return { p50: at(0.5), p99: at(0.99), rps: Math.round(REQUESTS / ((Date.now() - started) / 1000)) };
}

async function main(): Promise<void> {
  const databaseUrl = `postgresql://postgres@127.0.0.1:5432/nftw_media_${Date.now().toString(36)}`;
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init(
    buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl }), { entities: ENTITIES }),
  );
  try {
    await runMigrations(orm, databaseUrl);
  } finally {
    await orm.close();
  }
  const base = await basePicture();
  log(`base picture: ${(base.length / 1048576).toFixed(2)} MiB`);
  const host = createServer((req, res) => {
    const n = Number(/^\/img\/(\d+)\.jpg$/.exec(req.url ?? '')?.[1] ?? NaN);
    if (!Number.isInteger(n)) return void res.writeHead(404).end();
    const bytes = variant(base, n);
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': bytes.length }).end(bytes);
  });
  const hostUrl = await listen(host);
  const port = await freePort();
  const queuePrefix = `benchmedia${Date.now().toString(36)}`;
  const start = (role: 'api' | 'indexer', listenOn: number) =>
    spawn(process.execPath, SERVICE_MAIN, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        PATH: env.PATH,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        PORT: String(listenOn),
        ROLE: role,
        DATABASE_URL: databaseUrl,
        DB_MIGRATE_ON_START: 'false',
        QUEUE_PREFIX: queuePrefix,
        SECRETS_ENCRYPTION_KEY: KEY,
        AUDIT_CHAIN_KEY: KEY,
        MEDIA_SIGNING_KEY: KEY,
        METRICS_TOKEN: OPERATOR_KEY,
        OPERATOR_API_KEY: OPERATOR_KEY,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        RATE_LIMIT_PER_KEY: '10000000',
        RATE_LIMIT_PER_IP: '10000000',
      },
    });
  // The API takes the writes and serves the thumbnails; the worker (ROLE=indexer) only fetches and
  // makes them, so its CPU and memory are the media worker's alone.
  const service = start('api', port);
  const workerPort = await freePort();
  const worker = start('indexer', workerPort);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const results: Record<string, unknown> = {};
  try {
    const serviceUrl = `http://127.0.0.1:${port}`;
    for (const deadline = Date.now() + 120_000; ; await sleep(250)) {
      if (service.exitCode !== null || worker.exitCode !== null) throw new Error('a service process exited');
      if (Date.now() > deadline) throw new Error('the service was not ready in 120 s');
      if (
        (await fetch(`http://127.0.0.1:${workerPort}/health/ready`).then(
          (res) => res.ok,
          () => false,
        )) &&
        (await fetch(`${serviceUrl}/health/ready`).then(
          (res) => res.ok,
          () => false,
        ))
      )
        break;
    }
    const organization = await api<{ id: string }>(serviceUrl, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name: 'media bench' });
    const { key } = await api<{ key: string }>(serviceUrl, 'POST', `/admin/v1/organizations/${organization.id}/api-keys`, OPERATOR_KEY, {
      name: 'bench',
      roles: ['admin'],
    });
    const okCount = async () => Number((await db.query(`select count(*) as n from "token_media" where "status" = 'ok'`)).rows[0].n);
    const create = (n: number) =>
      api(serviceUrl, 'POST', '/v1/tokens', key, {
        contractAddress: `0x${'ab'.repeat(20)}`,
        blockchainTokenId: String(n),
        metadata: { image: `${hostUrl}/img/${n}.jpg` },
      });

    // Warm-up: code paths compiled, pools open, libvips loaded.
    await pool(
      Array.from({ length: WARM_UP }, (_, i) => 1_000_000 + i),
      4,
      async (n) => void (await create(n)),
    );
    while ((await okCount()) < WARM_UP) await sleep(200);
    await sleep(1000);
    const rssBefore = rssMb(worker.pid!);
    const cpuBefore = cpuSeconds(worker.pid!);

    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(worker.pid!))), 100);
    const started = Date.now();
    await pool(
      Array.from({ length: IMAGES }, (_, i) => i),
      16,
      async (n) => void (await create(n)),
    );
    const posted = Date.now() - started;
    while ((await okCount()) < WARM_UP + IMAGES) {
      if (Date.now() - started > 600_000) throw new Error('thumbnails not done in 10 minutes');
      await sleep(100);
    }
    const elapsed = (Date.now() - started) / 1000;
    const cpu = cpuSeconds(worker.pid!) - cpuBefore;
    clearInterval(sampler);
    const failed = Number((await db.query(`select count(*) as n from "token_media" where "status" = 'failed'`)).rows[0].n);
    results.thumbnails = {
      images: IMAGES,
      seconds: Math.round(elapsed * 10) / 10,
      imagesPerSecond: Math.round((IMAGES / elapsed) * 10) / 10,
      postsSeconds: Math.round(posted / 100) / 10,
      cpuMsPerImage: Math.round((cpu * 1000) / IMAGES),
      failed,
      rssBeforeMb: Math.round(rssBefore),
      rssPeakMb: Math.round(peak),
      rssIncreaseMb: Math.round(peak - rssBefore),
    };
    log(`service: ${JSON.stringify(results.thumbnails)}`);

    // Raw baseline: the same kind of work, without the service.
    const baselineStarted = Date.now();
    const baselineCpu = process.cpuUsage();
    await pool(
      Array.from({ length: BASELINE_IMAGES }, (_, i) => 2_000_000 + i),
      2,
      async (n) => {
        const bytes = Buffer.from(await (await fetch(`${hostUrl}/img/${n}.jpg`)).arrayBuffer());
        for (const width of [64, 256, 1024])
          await sharp(bytes).rotate().resize({ width, withoutEnlargement: true }).webp({ quality: 80, effort: 1 }).toBuffer();
      },
    );
    const baselineSeconds = (Date.now() - baselineStarted) / 1000;
    const baselineCpuUsed = process.cpuUsage(baselineCpu);
    const baselineRate = BASELINE_IMAGES / baselineSeconds;
    results.thumbnailsBaseline = {
      images: BASELINE_IMAGES,
      seconds: Math.round(baselineSeconds * 10) / 10,
      imagesPerSecond: Math.round(baselineRate * 10) / 10,
      // The image host runs in this process too: its share is in this figure.
      cpuMsPerImage: Math.round((baselineCpuUsed.user + baselineCpuUsed.system) / 1000 / BASELINE_IMAGES),
      serviceOverBaseline: Math.round((IMAGES / elapsed / baselineRate) * 100) / 100,
    };
    log(`baseline: ${JSON.stringify(results.thumbnailsBaseline)}`);

    // Thumbnail answers.
    const tokens = (await db.query<{ token_id: string }>(`select "token_id" from "token_media" where "status" = 'ok' limit 100`)).rows;
    const paths: string[] = [];
    for (const { token_id } of tokens) {
      const token = await api<{ media: { thumbnails: Record<string, string> } }>(serviceUrl, 'GET', `/v1/tokens/${token_id}`, key);
      for (const link of Object.values(token.media.thumbnails)) paths.push(new URL(link).pathname + new URL(link).search);
    }
    await latencies(paths.slice(0, 200), serviceUrl);
    results.thumbnailAnswer = await latencies(paths, serviceUrl);
    const rawPool = new Pool({ connectionString: databaseUrl, max: 5 });
    const signingKey = Buffer.from(KEY, 'base64');
    const raw = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const [, , , sha, file] = url.pathname.split('/');
      const width = Number(file.split('.')[0]);
      const sig = createHmac('sha256', signingKey)
        .update(`${sha}/${width}/${url.searchParams.get('exp')}`)
        .digest('base64url');
      if (sig !== url.searchParams.get('sig')) return void res.writeHead(403).end();
      rawPool
        .query('select "bytes" from "media_thumbnail" where "sha256" = $1 and "width" = $2', [sha, width])
        .then(({ rows }) => res.writeHead(200, { 'content-type': 'image/webp' }).end(rows[0].bytes))
        .catch(() => res.writeHead(500).end());
    });
    const rawUrl = await listen(raw);
    await latencies(paths.slice(0, 200), rawUrl);
    results.thumbnailAnswerBaseline = await latencies(paths, rawUrl);
    raw.close();
    await rawPool.end();
  } finally {
    await db.end();
    for (const child of [service, worker]) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    host.close();
    await dropDatabase(databaseUrl);
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
