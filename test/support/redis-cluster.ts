import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';

const run = promisify(execFile);

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

/** A throwaway Redis Cluster of three masters on free loopback ports, each with its own directory. */
export class LocalRedisCluster {
  private readonly processes: ChildProcess[] = [];
  private dir = '';
  ports: number[] = [];

  /** REDIS_CLUSTER_NODES for the service. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  async start(): Promise<this> {
    this.dir = mkdtempSync(join(tmpdir(), 'nftw-cluster-'));
    // Ports of a cluster also use port + 10000 for the bus: pick ports whose bus port is free too.
    while (this.ports.length < 3) {
      const port = await freePort();
      if (port < 55_000 && !this.ports.includes(port)) this.ports.push(port);
    }
    for (const port of this.ports) {
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          this.dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--protected-mode',
          'no',
        ],
        { stdio: 'ignore' },
      );
      this.processes.push(child);
    }
    for (const port of this.ports) await this.waitFor(port, async (r) => (await r.ping()) === 'PONG');
    await run('redis-cli', ['--cluster', 'create', ...this.ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (const port of this.ports) {
      await this.waitFor(port, async (r) => /cluster_state:ok/.test(String(await r.call('cluster', 'info'))));
    }
    return this;
  }

  /** A client of one node (no redirections), for checks and for emptying that node. */
  node(port: number): Redis {
    return new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  }

  /** Empties every node, as a managed Redis restarted empty would be. */
  async flushAll(): Promise<void> {
    for (const port of this.ports) {
      const client = this.node(port);
      try {
        await client.flushall();
      } finally {
        client.disconnect();
      }
    }
  }

  /** The connections every node has from clients that named themselves (the service names each of its own). */
  async namedClients(): Promise<{ node: number; id: string; name: string }[]> {
    const out: { node: number; id: string; name: string }[] = [];
    for (const port of this.ports) {
      const client = this.node(port);
      try {
        const list = String(await client.call('client', 'list'));
        for (const line of list.split('\n')) {
          const fields = new Map(line.split(' ').map((field) => field.split('=', 2) as [string, string]));
          const name = fields.get('name') ?? '';
          if (name !== '') out.push({ node: port, id: fields.get('id') ?? '', name });
        }
      } finally {
        client.disconnect();
      }
    }
    return out;
  }

  /** Keys matching `pattern` per node port. */
  async keysByNode(pattern: string): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>();
    for (const port of this.ports) {
      const client = this.node(port);
      try {
        out.set(port, await client.keys(pattern));
      } finally {
        client.disconnect();
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitFor(port: number, check: (client: Redis) => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const client = this.node(port);
      try {
        if (await check(client)) return;
      } catch {
        // not up yet
      } finally {
        client.disconnect();
      }
      if (Date.now() > deadline) throw new Error(`redis node ${port} not ready in 20 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
