/**
 * Chain following end to end on this machine, in one command and under a minute:
 *
 *   npm run demo:chain
 *
 * Starts a local EVM node (anvil, chain 31337), deploys an ERC-721 and an ERC-1155, starts the
 * service following that node (CHAIN_CONFIRMATIONS=0) with a database and queues of its own,
 * creates an organization and a wallet at an address, mints both tokens to that address, and
 * prints the wallet's balances as the API answers them and every webhook as a local receiver
 * verified it (Standard Webhooks signature). Everything it started or created is removed on exit:
 * the node and its temporary home, the service, its database and its Redis keys.
 *
 * Needs PostgreSQL and Redis as for `npm start` (DATABASE_URL names the server; the demo's own
 * database is created beside the one named there, and REDIS_URL).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { startReceiver, type ReceivedWebhook } from '../examples/webhook-receiver';
import { ERC1155_ABI, ERC721_ABI, LocalChain } from '../test/support/evm';

const CHAIN_ID = 31337;
const DEADLINE_MS = 50_000;
const QUEUE_PREFIX = `demo-chain-${process.pid}`;

const databaseServer = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres:postgres@127.0.0.1:5432/nft_wallet');
const database = `nftw_demo_chain_${process.pid}`;
const databaseUrl = Object.assign(new URL(databaseServer), { pathname: `/${database}` }).toString();
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

/** Polls `probe` until it returns something other than null, or fails naming `what`. */
async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = DEADLINE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(200);
  }
}

/** The service as its own process, following the node; its output is kept for a failure report. */
class Service {
  readonly output: string[] = [];
  readonly url: string;
  private readonly child: ChildProcess;

  constructor(port: number, env: Record<string, string>) {
    this.url = `http://127.0.0.1:${port}`;
    this.child = spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--swc', 'src/main.ts'], {
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => this.output.push(...String(chunk).split('\n').filter(Boolean));
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** SIGTERM (the service drains and closes its connections), SIGKILL if it takes too long. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  }
}

async function api<T>(service: Service, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

interface Balance {
  amount: string;
  token: { contractAddress: string; blockchainTokenId: string };
}

async function run(cleanups: Array<() => Promise<unknown>>): Promise<void> {
  const started = Date.now();
  const chain = await LocalChain.start({ chainId: CHAIN_ID });
  cleanups.push(() => chain.stop());
  say(`anvil: chain ${CHAIN_ID} at ${chain.rpcUrl}`);
  const erc721 = await chain.deployErc721({ name: 'Demo NFT', symbol: 'DEMO' });
  const erc1155 = await chain.deployErc1155();
  say(`deployed ERC-721 at ${erc721} and ERC-1155 at ${erc1155}`);

  const sharedSecret = randomBytes(24).toString('base64url');
  const verified: ReceivedWebhook[] = [];
  const storePath = join(tmpdir(), `demo-chain-webhooks-${process.pid}.jsonl`);
  const receiver = await startReceiver({
    sharedSecret,
    storePath,
    onWebhook: (w) => {
      verified.push(w);
      say(`  ✔ webhook signature verified: ${w.resourceType} ${w.action} ${w.resourceId}`);
    },
  });
  cleanups.push(async () => {
    await new Promise((resolve) => receiver.server.close(resolve));
    rmSync(storePath, { force: true });
  });

  const operatorKey = randomBytes(24).toString('base64url');
  say(`starting the service with its own database ${database} (migrations take a few seconds)...`);
  const service = new Service(await freePort(), {
    NODE_ENV: 'development',
    DATABASE_URL: databaseUrl,
    DATABASE_DIRECT_URL: databaseUrl,
    DB_MIGRATE_ON_START: 'true',
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    OPERATOR_API_KEY: operatorKey,
    CHAIN_RPC_URLS: `${CHAIN_ID}=${chain.rpcUrl}`,
    CHAIN_CONFIRMATIONS: '0',
    CHAIN_START_BLOCK: '0',
    CHAIN_POLL_INTERVAL_MS: '200',
    OUTBOX_POLL_INTERVAL: '200ms',
    LOG_LEVEL: 'warn',
  });
  cleanups.push(() => service.stop());
  await waitFor('the service to be ready', async () => {
    if (service.exited) throw new Error(`the service stopped:\n${service.output.slice(-15).join('\n')}`);
    return (await fetch(`${service.url}/health/ready`)).ok ? true : null;
  }).catch((error: unknown) => {
    throw service.exited ? new Error(`the service stopped:\n${service.output.slice(-15).join('\n')}`) : error;
  });
  say(`service ready at ${service.url}`);

  const organization = await api<{ id: string }>(service, operatorKey, 'POST', '/admin/v1/organizations', { name: 'Chain demo' });
  const { key } = await api<{ key: string }>(service, operatorKey, 'POST', `/admin/v1/organizations/${organization.id}/api-keys`, {
    name: 'demo',
    roles: ['admin'],
  });
  await api(service, key, 'PATCH', '/api/organization/v1/current-organization/webhook-config', {
    url: receiver.url,
    sharedSecret,
    webhookTypes: ['nft', 'transaction', 'custodialAccount'],
    enabled: true,
  });
  const holder = chain.accounts[1];
  const wallet = await api<{ id: string }>(service, key, 'POST', '/v1/wallets', { name: 'Demo wallet', address: holder });
  say(`organization ${organization.id}, wallet ${wallet.id} at ${holder}`);

  await chain.write(erc721, ERC721_ABI, 'mint', [holder, 1n]);
  await chain.write(erc1155, ERC1155_ABI, 'mint', [holder, 7n, 5n]);
  say('minted ERC-721 #1 and 5 of ERC-1155 #7 to the wallet address; waiting for the service to follow...');

  const balances = await waitFor('both balances in GET /v2/wallets/{walletId}/nft-balances', async () => {
    const page = await api<{ nftTokenBalances: Balance[] }>(service, key, 'GET', `/v2/wallets/${wallet.id}/nft-balances`);
    return page.nftTokenBalances.length >= 2 ? page.nftTokenBalances : null;
  });
  say('balance (GET /v2/wallets/{walletId}/nft-balances):');
  for (const b of balances) say(`  ${b.token.contractAddress} #${b.token.blockchainTokenId}: ${b.amount}`);

  const movements = () => verified.filter((w) => w.resourceType === 'Transaction');
  await waitFor('a verified webhook for each mint', () => Promise.resolve(movements().length >= 2 ? true : null));
  say(`verified webhooks: ${verified.length} (${movements().length} transactions) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Removes what the service left outside its process: its database and its queues' Redis keys. */
async function removeServiceData(): Promise<void> {
  const maintenance = Object.assign(new URL(databaseServer), { pathname: '/postgres' }).toString();
  const pg = new Client({ connectionString: maintenance });
  await pg.connect();
  try {
    await pg.query(`drop database if exists "${database}" with (force)`);
  } finally {
    await pg.end();
  }
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${QUEUE_PREFIX}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<number> {
  const cleanups: Array<() => Promise<unknown>> = [];
  let code = 0;
  let interrupted = false;
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
    await removeServiceData().catch((error: unknown) => process.stderr.write(`cleaning up the demo's data failed: ${String(error)}\n`));
  };
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    say('interrupted: cleaning up...');
    void cleanUp().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await run(cleanups);
  } catch (error) {
    process.stderr.write(`demo:chain failed: ${error instanceof Error ? error.message : String(error)}\n`);
    code = 1;
  }
  if (!interrupted) {
    await cleanUp();
    say('cleaned up: node, service, database and queues removed');
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
