/**
 * CPU cost per delivered webhook, read from /proc: the CPU seconds (user + system) consumed during
 * a burst by every process of the service — its node processes (API and workers), the PostgreSQL
 * postmaster with all its background processes (checkpointer, background writer, WAL writer,
 * autovacuum) and the backends connected to the bench database, and the Redis server — divided
 * by the webhooks delivered. The receiver and the harness are excluded.
 *
 * PostgreSQL and Redis are shared with whatever else runs on the machine: backends of other
 * databases are left out, but the background processes and Redis also work for others, so the
 * figure is an upper bound on a busy machine (BENCHMARKS.md says so).
 *
 * Processes come and go during a burst (pool connections, autovacuum workers), so the meter polls
 * every few hundred milliseconds and keeps the last value it saw of each; a process first seen
 * during the burst counts from zero.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Client } from 'pg';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();
const POLL_MS = 200;

interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

function readProc(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    // Fields after the command: state(3) ppid(4) ... utime(14) stime(15), 1-based in proc(5).
    const rest = stat.slice(close + 2).split(' ');
    return { pid, ppid: Number(rest[1]), comm, ticks: Number(rest[11]) + Number(rest[12]) };
  } catch {
    return null;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/**
 * A PostgreSQL child process belongs to the measurement unless it is a client backend (or an
 * autovacuum worker) of another database: `postgres: 15/main: <user> <database> <host>(port) …`.
 */
function isOursPostgres(line: string, database: string): boolean {
  const words = line.replace(/^postgres:\s*(\d+\/\S+:\s*)?/, '').split(/\s+/);
  if (words[0] === 'autovacuum' && words[1] === 'worker') return words[2] === undefined || words[2] === database;
  const isBackend = words.length >= 3 && /(\(\d+\)|\[local\])$/.test(words[2]);
  return !isBackend || words[1] === database;
}

export class CpuMeter {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;

  /** `servicePids`: the service's node processes; PostgreSQL and Redis are found in /proc. */
  constructor(
    private readonly servicePids: () => number[],
    private readonly database: string,
  ) {}

  private pids(): number[] {
    const all: ProcInfo[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const info = readProc(Number(entry));
      if (info) all.push(info);
    }
    const postmasters = new Set(
      all.filter((p) => p.comm === 'postgres' && !all.some((q) => q.pid === p.ppid && q.comm === 'postgres')).map((p) => p.pid),
    );
    const out = new Set<number>(this.servicePids());
    for (const p of all) {
      if (postmasters.has(p.pid)) out.add(p.pid);
      else if (postmasters.has(p.ppid) && isOursPostgres(cmdline(p.pid), this.database)) out.add(p.pid);
      else if (p.comm === 'redis-server') out.add(p.pid);
    }
    return [...out];
  }

  private sample(): void {
    for (const pid of this.pids()) {
      const info = readProc(pid);
      if (!info) continue;
      if (!this.first.has(pid)) this.first.set(pid, this.started ? 0 : info.ticks);
      this.last.set(pid, info.ticks);
    }
  }

  private started = false;

  start(): void {
    this.first.clear();
    this.last.clear();
    this.started = false;
    this.sample();
    this.started = true;
    this.timer = setInterval(() => this.sample(), POLL_MS);
  }

  /** CPU milliseconds consumed since start(), in total and by group. */
  stop(): { totalMs: number; byGroup: Record<string, number> } {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const byGroup: Record<string, number> = { service: 0, postgres: 0, redis: 0 };
    const service = new Set(this.servicePids());
    for (const [pid, end] of this.last) {
      const ms = ((end - (this.first.get(pid) ?? 0)) * 1000) / TICKS_PER_SECOND;
      const comm = readProc(pid)?.comm ?? '';
      const group = service.has(pid) ? 'service' : comm === 'redis-server' ? 'redis' : 'postgres';
      byGroup[group] += ms;
    }
    const totalMs = byGroup.service + byGroup.postgres + byGroup.redis;
    return { totalMs, byGroup };
  }
}

interface DbCounters {
  xact_commit: number;
  tup_inserted: number;
  tup_updated: number;
  tup_deleted: number;
}

/** Transactions and row writes of the bench database so far (pg_stat_database; every autocommitted statement is one transaction). */
async function dbCounters(db: Client): Promise<DbCounters> {
  // The statistics are updated when a backend reports (at the latest every second or so).
  const row = (
    await db.query(
      `select xact_commit::float8 as xact_commit, tup_inserted::float8 as tup_inserted, tup_updated::float8 as tup_updated,
              tup_deleted::float8 as tup_deleted from pg_stat_database where datname = current_database()`,
    )
  ).rows[0];
  return row as DbCounters;
}

/**
 * Runs `burst` under the meter and returns the CPU figures per delivered webhook, with the
 * database transactions and row writes per webhook (statistics settle a moment after the burst).
 */
export async function measureCpu<T extends { delivered: number }>(
  meter: CpuMeter,
  burst: () => Promise<T>,
  db?: Client,
): Promise<T & { cpuMsPerWebhook: number; cpuMs: Record<string, number>; perWebhook?: Record<string, number> }> {
  const before = db ? await dbCounters(db) : null;
  meter.start();
  const result = await burst();
  const { totalMs, byGroup } = meter.stop();
  const perWebhook = result.delivered > 0 ? totalMs / result.delivered : NaN;
  const rounded = Object.fromEntries(Object.entries({ total: totalMs, ...byGroup }).map(([k, v]) => [k, Math.round(v)]));
  let writes: Record<string, number> | undefined;
  if (db && before && result.delivered > 0) {
    await new Promise((r) => setTimeout(r, 1500));
    const after = await dbCounters(db);
    writes = Object.fromEntries(
      (Object.keys(after) as (keyof DbCounters)[]).map((k) => [k, Math.round(((after[k] - before[k]) / result.delivered) * 100) / 100]),
    );
  }
  return { ...result, cpuMsPerWebhook: Math.round(perWebhook * 1000) / 1000, cpuMs: rounded, ...(writes ? { perWebhook: writes } : {}) };
}

/**
 * What the database and Redis did per delivered webhook during a burst, by statement and by
 * command: counts do not depend on how loaded the machine is, so they show where a change of
 * deployment (a second worker) adds work even when CPU figures are noisy. Needs
 * pg_stat_statements loaded in the bench's PostgreSQL and a Redis of the bench's own (the
 * command counts are server-wide); `npm run bench` turns it on with BENCH_PROFILE=1.
 */
export class WorkProfile {
  constructor(
    private readonly db: Client,
    private readonly redisInfo: (section: string) => Promise<string>,
    private readonly resetRedis: () => Promise<unknown>,
  ) {}

  async start(): Promise<void> {
    await this.db.query('create extension if not exists pg_stat_statements');
    await this.db.query('select pg_stat_statements_reset()');
    await this.resetRedis();
  }

  async report(delivered: number, top = 12): Promise<string[]> {
    const rows = (
      await this.db.query<{ query: string; calls: string; ms: number; rows: string }>(
        `select regexp_replace(left(query, 110), '\\s+', ' ', 'g') as query, calls, total_exec_time as ms, rows
           from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = current_database() and query not like '%pg_stat_statements%'
          order by total_exec_time desc limit $1`,
        [top],
      )
    ).rows;
    const per = (n: number) => Math.round((n / delivered) * 1000) / 1000;
    const lines = rows.map(
      (r) => `    db ${per(Number(r.calls))} calls ${per(r.ms)} ms ${per(Number(r.rows))} rows per webhook: ${r.query}`,
    );
    const stats = await this.redisInfo('commandstats');
    const commands = [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm)]
      .map((m) => ({ name: m[1], calls: Number(m[2]), usec: Number(m[3]) }))
      .sort((a, b) => b.usec - a.usec)
      .slice(0, 8);
    lines.push(`    redis per webhook: ${commands.map((c) => `${c.name} ${per(c.calls)} (${per(c.usec / 1000)} ms)`).join(', ')}`);
    return lines;
  }
}
