/**
 * `npm run bench:audit-export`: the memory an audit-log export costs the service. Starts the real
 * service (ROLE=api) on a fresh database, gives one organization AUDIT_EXPORT_ENTRIES (1,000,000)
 * audit entries, streams GET …/audit-log/export to a client that only counts lines, and samples
 * the server's resident set (/proc/<pid>/status) every 50 ms. Prints one JSON object.
 *
 * Environment (optional): BENCH_DATABASE_BASE_URL (postgresql://postgres@127.0.0.1:5432),
 * REDIS_URL, AUDIT_EXPORT_ENTRIES, BENCH_KEEP_DB=1.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { ensureDatabase } from '../src/database/database-url';

const ROOT = resolve(__dirname, '..');
const ENTRIES = Number(process.env.AUDIT_EXPORT_ENTRIES ?? 1_000_000);
const BASE = process.env.BENCH_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432';
const OPERATOR_KEY = randomBytes(24).toString('hex');
const log = (message: string) => process.stderr.write(`[audit-export ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const freePort = () =>
  new Promise<number>((ok) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });

/** Resident set of a process in MiB (VmRSS), from the kernel's own accounting. */
const rssMiB = (pid: number) => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
};

async function http(port: number, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

async function main(): Promise<void> {
  const url = new URL(BASE);
  url.pathname = `/nftw_bench_audit_${Date.now().toString(36)}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  const port = await freePort();
  const server = spawn(process.execPath, [join(ROOT, 'node_modules/.bin/ts-node'), '--swc', join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      ROLE: 'api',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DB_MIGRATE_ON_START: 'true',
      OPERATOR_API_KEY: OPERATOR_KEY,
      QUEUE_PREFIX: `benchaudit${process.pid}`,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_KEY: '0',
      RATE_LIMIT_PER_IP: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const db = new Client({ connectionString: databaseUrl });
  try {
    for (let i = 0; ; i += 1) {
      try {
        await fetch(`http://127.0.0.1:${port}/health/live`);
        break;
      } catch {
        if (i > 600) throw new Error('the service did not start');
        await sleep(200);
      }
    }
    const org = await http(port, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name: 'Audit export bench' });
    const key = (await http(port, 'POST', `/admin/v1/organizations/${org.id as string}/api-keys`, OPERATOR_KEY, {
      name: 'auditor',
      roles: ['auditor'],
    })) as { key: string };

    await db.connect();
    log(`writing ${ENTRIES} audit entries`);
    const [{ head_seq: head }] = (await db.query('select "head_seq" from "audit_chain" where "organization_id" = $1', [org.id])).rows;
    // Shaped like real entries (a whitelist change each); the export streams them whatever their hashes.
    await db.query(
      `insert into "audit_entry" ("id", "created_at", "organization_id", "action", "api_key_id", "key_prefix", "request_id", "ip", "changes", "chain_seq", "hash")
       select (lpad(to_hex(1700000000000 + i), 12, '0') || '-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
              now() - interval '1 day' + i * interval '1 millisecond', $1, 'nftWhitelist.contracts.add',
              null, 'nftw_AbCdEfGh', 'req-' || i, '203.0.113.7',
              jsonb_build_object('contractAddresses', jsonb_build_object('from', null, 'to', jsonb_build_array('0x' || md5(i::text) || '00000000')),
                                 'contractCount', jsonb_build_object('from', i, 'to', i + 1)),
              $2::bigint + i, encode(sha256(i::text::bytea), 'hex')
         from generate_series(1, $3::int) as i`,
      [org.id, head, ENTRIES],
    );
    await db.query('update "audit_chain" set "head_seq" = "head_seq" + $2 where "organization_id" = $1', [org.id, ENTRIES]);
    await db.query('analyze "audit_entry"');

    const pid = server.pid!;
    await sleep(1000);
    const idle = rssMiB(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 50);
    log(`exporting (server RSS before: ${idle.toFixed(1)} MiB)`);
    const started = Date.now();
    const { lines, bytes } = await new Promise<{ lines: number; bytes: number }>((ok, fail) => {
      get(
        {
          host: '127.0.0.1',
          port,
          path: '/api/organization/v1/current-organization/audit-log/export',
          headers: { authorization: `Bearer ${key.key}` },
        },
        (res) => {
          if (res.statusCode !== 200) return fail(new Error(`export answered ${res.statusCode}`));
          let count = 0;
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) count += 1;
          });
          res.on('end', () => ok({ lines: count, bytes: size }));
          res.on('error', fail);
        },
      ).on('error', fail);
    });
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    const result = {
      scenario: 'auditExport',
      entries: ENTRIES,
      linesReceived: lines,
      megabytes: Number((bytes / 1048576).toFixed(1)),
      seconds: Number(seconds.toFixed(1)),
      linesPerSecond: Math.round(lines / seconds),
      serverRssBeforeMiB: Number(idle.toFixed(1)),
      serverRssPeakMiB: Number(peak.toFixed(1)),
      serverRssGrowthMiB: Number((peak - idle).toFixed(1)),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    server.kill('SIGTERM');
    await db.end().catch(() => undefined);
    if (process.env.BENCH_KEEP_DB !== '1') {
      await sleep(1500);
      const admin = new URL(databaseUrl);
      admin.pathname = '/postgres';
      const client = new Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
      await client.end();
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
