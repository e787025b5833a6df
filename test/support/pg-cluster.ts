import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const DATABASE = 'nft_wallet';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: every binary runs as the postgres user. */
async function asPostgres(binary: string, args: string[]): Promise<void> {
  await run('runuser', ['-u', 'postgres', '--', join(BIN, binary), ...args]);
}

/** One statement on one server, on a connection of its own. */
export async function sql<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A throwaway primary (initdb) and a hot-standby streaming replica of it (pg_basebackup -R), on
 * free loopback ports, in a temporary directory; trust authentication on 127.0.0.1.
 */
export class PgCluster {
  private dir = '';
  private primaryPort = 0;
  private replicaPort = 0;

  get primaryUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.primaryPort}/${DATABASE}`;
  }

  get replicaUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.replicaPort}/${DATABASE}`;
  }

  private get primaryDir(): string {
    return join(this.dir, 'primary');
  }

  private get replicaDir(): string {
    return join(this.dir, 'replica');
  }

  async start(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'nftw-pg-'));
    // The postgres user creates its data directories inside.
    chmodSync(this.dir, 0o777);
    this.primaryPort = await freePort();
    do this.replicaPort = await freePort();
    while (this.replicaPort === this.primaryPort);

    await asPostgres('initdb', ['-D', this.primaryDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
    appendFileSync(
      join(this.primaryDir, 'postgresql.conf'),
      [
        `port = ${this.primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${this.dir}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'hot_standby = on',
        // Which statements each server ran: the proof that reads reach the replica.
        "shared_preload_libraries = 'pg_stat_statements'",
        // Nothing here needs to survive a crash. Commits stay synchronous, as on a real primary:
        // an asynchronous commit answers before its WAL is written out, so a replica that has
        // replayed all the primary wrote (waitForReplay) could still lack a row already answered
        // as created, and a GET of it would rightly be read again from the primary.
        'fsync = off',
        '',
      ].join('\n'),
    );
    await this.startServer(this.primaryDir);
    await sql(this.primaryUrl.replace(`/${DATABASE}`, '/postgres'), `create database ${DATABASE}`);
    await sql(this.primaryUrl, 'create extension pg_stat_statements');

    await asPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.primaryPort),
      '-U',
      'postgres',
      '-D',
      this.replicaDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    // The copied configuration names the primary's port; the later line wins.
    appendFileSync(join(this.replicaDir, 'postgresql.conf'), `port = ${this.replicaPort}\n`);
    await this.startServer(this.replicaDir);
    await this.waitForReplay();
  }

  private async startServer(dataDir: string): Promise<void> {
    await asPostgres('pg_ctl', ['-D', dataDir, '-l', `${dataDir}.log`, '-w', '-t', '60', 'start']);
  }

  /** Waits until the replica has replayed everything the primary has written so far: every commit it answered. */
  async waitForReplay(timeoutMs = 30_000): Promise<void> {
    const [{ lsn }] = await sql<{ lsn: string }>(this.primaryUrl, 'select pg_current_wal_lsn()::text as lsn');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [{ done }] = await sql<{ done: boolean }>(this.replicaUrl, 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn]);
      if (done) return;
      if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${lsn} in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Pauses replay on the replica and waits until it is actually paused: pg_wal_replay_pause only
   * requests it, and the replica pauses at the next record it reads, so the primary writes one
   * (a transaction with an id commits a WAL record) until the replica reports `paused`.
   */
  async pauseReplay(timeoutMs = 10_000): Promise<void> {
    await sql(this.replicaUrl, 'select pg_wal_replay_pause()');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [{ state }] = await sql<{ state: string }>(this.replicaUrl, 'select pg_get_wal_replay_pause_state() as state');
      if (state === 'paused') return;
      if (Date.now() > deadline) throw new Error(`the replica's replay did not pause in ${timeoutMs} ms (state ${state})`);
      await sql(this.primaryUrl, 'select pg_current_xact_id()');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async resumeReplay(): Promise<void> {
    await sql(this.replicaUrl, 'select pg_wal_replay_resume()');
  }

  async stopReplica(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.replicaDir, '-m', 'fast', '-w', 'stop']);
  }

  /** Stops both servers (whichever still run) and deletes their directories. */
  async destroy(): Promise<void> {
    if (this.dir === '') return;
    for (const dataDir of [this.replicaDir, this.primaryDir]) {
      await asPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    rmSync(this.dir, { recursive: true, force: true });
    this.dir = '';
  }
}
