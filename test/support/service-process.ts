import { ChildProcess, spawn } from 'node:child_process';
import { AddressInfo, createServer } from 'node:net';
import request from 'supertest';
import { waitUntil } from './receiver';
import { TestApp } from './test-app';

/** A port nothing listens on right now, for a process the test starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The real entry point (src/main.ts) as its own process. Suites that measure time or kill a
 * process use it: the service then has an event loop and heap of its own, as deployed, rather
 * than sharing the test runner's with every suite that ran before.
 */
export class ServiceProcess {
  readonly output: string[] = [];
  exit: Promise<number | null>;
  private child: ChildProcess;

  constructor(
    readonly port: number,
    env: Record<string, string | undefined>,
  ) {
    // node itself runs ts-node (no npx or shell in between), so a signal reaches the service.
    this.child = spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--swc', 'src/main.ts'], {
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) =>
      this.output.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l.length > 0),
      );
    this.child.stdout!.on('data', collect);
    this.child.stderr!.on('data', collect);
    this.exit = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Starts a process on a free port and resolves once it listens. */
  static async start(env: Record<string, string | undefined>): Promise<ServiceProcess> {
    const service = new ServiceProcess(await freePort(), env);
    await service.ready();
    return service;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** What the factories need to drive this process over HTTP, as they drive an in-process app. */
  get client(): Pick<TestApp, 'http'> {
    return { http: () => request(this.url) };
  }

  async ready(): Promise<void> {
    await waitUntil(
      () => ({ up: this.output.some((l) => l.includes('listening on')), exited: this.child.exitCode !== null }),
      (state) => {
        if (state.exited) throw new Error(`the service exited before listening: ${this.output.slice(-20).join('\n')}`);
        return state.up;
      },
      90_000,
    );
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  /** SIGKILL and wait for the exit, so nothing of the process outlives the suite. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.kill();
    await this.exit;
  }
}

/** The service's entry point, run by node itself: SIGKILL must hit the service, not a wrapper that leaves it orphaned. */
export const SERVICE_MAIN = [require.resolve('ts-node/dist/bin.js'), '--swc', 'src/main.ts'];

/**
 * Starts the real service entry point as a separate process with `env` over the test runner's
 * own, and resolves once it listens; for tests that kill it or read its output.
 */
export function startServiceProcess(env: Record<string, string | undefined>): Promise<ChildProcess> {
  const child = spawn(process.execPath, SERVICE_MAIN, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start in 60 s')), 60_000);
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the service exited with ${code}: ${output.slice(-2000)}`)));
  });
}

/** startServiceProcess for a delivery worker on a free port. */
export function startWorker(env: Record<string, string | undefined>): Promise<ChildProcess> {
  return startServiceProcess({ ...env, ROLE: 'worker', PORT: '0' });
}
