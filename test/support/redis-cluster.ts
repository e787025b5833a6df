import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo, createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';

const run = promisify(execFile);

/** The offset of a node's cluster bus port from its client port (Redis's default). */
const BUS_PORT_OFFSET = 10_000;
/** Attempts at a whole start, each on new ports: see `start`. */
const START_ATTEMPTS = 3;

/** Listens on `port` (0: any free one) on loopback; null when it is taken. */
async function listenOn(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A free loopback port whose cluster bus port is free too, and neither clashing with `taken`. */
async function freeNodePort(taken: readonly number[]): Promise<number> {
  const clashes = (port: number) => [port, port + BUS_PORT_OFFSET].some((p) => taken.some((t) => p === t || p === t + BUS_PORT_OFFSET));
  for (;;) {
    const server = await listenOn(0);
    if (!server) continue;
    const port = (server.address() as AddressInfo).port;
    const bus = port + BUS_PORT_OFFSET < 65_536 && !clashes(port) ? await listenOn(port + BUS_PORT_OFFSET) : null;
    await closeServer(server);
    if (bus) {
      await closeServer(bus);
      return port;
    }
  }
}

/** A node that exited while the cluster started: its port or bus port was taken after it was picked. */
class NodeExited extends Error {}

/** A throwaway Redis Cluster of three masters on free loopback ports, each with its own directory. */
export class LocalRedisCluster {
  private processes: ChildProcess[] = [];
  private dir = '';
  ports: number[] = [];

  /** REDIS_CLUSTER_NODES for the service. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /**
   * Starts the nodes and makes them one cluster. A port checked free can still be taken before
   * its node binds it (by an outgoing connection's local port, or another suite's server); that
   * node exits at once, and the whole start is made again on new ports. Every wait is bounded, so
   * a cluster that cannot form says why instead of outlasting the caller's timeout.
   */
  async start(): Promise<this> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startOnce();
        return this;
      } catch (error) {
        await this.stop();
        if (!(error instanceof NodeExited) || attempt === START_ATTEMPTS) throw error;
      }
    }
  }

  private async startOnce(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'nftw-cluster-'));
    while (this.ports.length < 3) this.ports.push(await freeNodePort(this.ports));
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
    for (const index of this.ports.keys()) await this.waitFor(index, async (r) => (await r.ping()) === 'PONG');
    // redis-cli waits for the nodes to agree for as long as it takes; it gets a bound here.
    await run(
      'redis-cli',
      ['--cluster', 'create', ...this.ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: 20_000 },
    ).catch((error: Error & { stdout?: string }) => {
      this.throwIfANodeExited();
      throw new Error(`redis-cli --cluster create failed: ${error.message}\n${error.stdout ?? ''}`);
    });
    for (const index of this.ports.keys()) {
      await this.waitFor(index, async (r) => /cluster_state:ok/.test(String(await r.call('cluster', 'info'))));
    }
  }

  /** A client of one node (no redirections), for checks and for emptying that node. */
  node(port: number): Redis {
    const client = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: 5000,
      retryStrategy: () => null,
    });
    // A refused connection while a node starts is expected; the command's rejection reports it.
    client.on('error', () => undefined);
    return client;
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

  /** Stops every node (killed if it does not stop within 10 s) and removes the directory. */
  async stop(): Promise<void> {
    await Promise.all(
      this.processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
    this.processes = [];
    this.ports = [];
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = '';
  }

  private throwIfANodeExited(): void {
    const index = this.processes.findIndex((child) => child.exitCode !== null || child.signalCode !== null);
    if (index >= 0) throw new NodeExited(`redis node ${this.ports[index]} exited while starting (port or bus port taken)`);
  }

  private async waitFor(index: number, check: (client: Redis) => Promise<boolean>): Promise<void> {
    const port = this.ports[index];
    const deadline = Date.now() + 20_000;
    for (;;) {
      this.throwIfANodeExited();
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
