import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian installs PgBouncer outside a normal user's PATH. */
const BINARIES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'];

function binary(): string {
  const found = BINARIES.find((path) => existsSync(path));
  if (!found) throw new Error(`PgBouncer is not installed (looked for ${BINARIES.join(', ')}): apt-get install pgbouncer`);
  return found;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => (socket.destroy(), resolve(false)));
    socket.connect(port, '127.0.0.1');
  });
}

/**
 * A PgBouncer of the test's own, on a free port, in transaction pooling mode with the default
 * `ignore_startup_parameters` (extra_float_digits only), in front of the PostgreSQL on
 * 127.0.0.1:5432 (any database name is passed through). PgBouncer refuses to run as root, so as
 * root it runs as the `postgres` user.
 */
export class TestPgBouncer {
  private process: ChildProcess | null = null;
  private readonly dir: string;
  private readonly ini: string;

  private constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
    const userlist = join(this.dir, 'userlist.txt');
    writeFileSync(userlist, '"postgres" ""\n');
    this.ini = join(this.dir, 'pgbouncer.ini');
    writeFileSync(
      this.ini,
      [
        '[databases]',
        '* = host=127.0.0.1 port=5432',
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        `unix_socket_dir = ${this.dir}`,
        'auth_type = trust',
        `auth_file = ${userlist}`,
        'pool_mode = transaction',
        'max_client_conn = 500',
        'default_pool_size = 20',
        `logfile = ${join(this.dir, 'pgbouncer.log')}`,
        '',
      ].join('\n'),
    );
    if (process.getuid?.() === 0) chownSync(this.dir, uid('postgres'), uid('postgres', 'g'));
  }

  static async start(): Promise<TestPgBouncer> {
    const bouncer = new TestPgBouncer(await freePort());
    await bouncer.resume();
    return bouncer;
  }

  get running(): boolean {
    return this.process !== null;
  }

  /** A database URL through this PgBouncer to the database of `databaseUrl`. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Starts PgBouncer (again) on its port and waits until it accepts connections. */
  async resume(): Promise<void> {
    if (this.process) throw new Error('PgBouncer is already running');
    const args = [binary(), this.ini];
    const [command, ...rest] = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...args] : args;
    // A process group of its own, so a kill reaches PgBouncer and not only runuser.
    const child = spawn(command, rest, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.process = child;
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await this.kill();
        throw new Error(`PgBouncer did not start on ${this.port}: ${stderr}${this.log()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Kills PgBouncer at once (SIGKILL): every client and server connection drops mid-flight. */
  async kill(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGKILL');
    await exited;
    // runuser's exit does not wait for its child: wait until the port is free again.
    const deadline = Date.now() + 10_000;
    while ((await accepts(this.port)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** PgBouncer's own log, for failure messages. */
  log(): string {
    try {
      return readFileSync(join(this.dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function uid(user: string, kind: 'u' | 'g' = 'u'): number {
  return Number(
    execFileSync('id', [`-${kind}`, user])
      .toString()
      .trim(),
  );
}
