/**
 * A new integrator's first verified webhook in one command, with the service running:
 *
 *   npm run demo:webhooks            (BASE_URL defaults to http://localhost:3000)
 *
 * Starts the example receiver, creates (or reuses) a demo organization, points its webhook
 * configuration at the receiver, makes a few writes and prints each webhook as it arrives. On
 * exit (Ctrl-C included) the configuration is disabled again: the receiver's port dies with this
 * process, and deliveries to it would only fail and retry for a day.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { startReceiver } from '../examples/webhook-receiver';

const BASE_URL = (process.env.BASE_URL ?? 'http://localhost:3000').replace(/\/$/, '');
const STATE_FILE = process.env.DEMO_STATE_FILE ?? '.demo-webhooks.json';
const EXPECTED = 5;

/** The parsed answer, typed by the caller with the fields it reads (null for an empty body). */
async function api<T = unknown>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${BASE_URL}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

interface DemoOrganization {
  organizationId: string;
  key: string;
}

async function demoOrganization(): Promise<DemoOrganization> {
  if (existsSync(STATE_FILE)) {
    const saved = JSON.parse(readFileSync(STATE_FILE, 'utf8')) as DemoOrganization;
    const { key } = saved;
    const probe = await fetch(`${BASE_URL}/api/organization/v1/current-organization/webhook-config`, {
      headers: { authorization: `Bearer ${key}` },
    });
    if (probe.ok) return saved;
  }
  // The CLI talks to the same database as the service (DATABASE_URL), so no operator key is needed.
  const out = execFileSync('npm', ['run', '-s', 'cli', '--', 'organization:create', '--name', 'Webhook demo'], { encoding: 'utf8' });
  const created = JSON.parse(out.trim().split('\n').pop()!) as { organization: { id: string }; apiKey: { key: string } };
  const demo = { organizationId: created.organization.id, key: created.apiKey.key };
  writeFileSync(STATE_FILE, JSON.stringify(demo));
  return demo;
}

const WEBHOOK_CONFIG = '/api/organization/v1/current-organization/webhook-config';

/** Leaves no enabled configuration pointing at this process's receiver once it is gone. */
async function disableWebhooks(key: string): Promise<void> {
  await api(key, 'PATCH', WEBHOOK_CONFIG, { enabled: false });
  process.stdout.write(`webhook configuration disabled again (its receiver stops with this demo)\n`);
}

async function main(): Promise<void> {
  const ready = await fetch(`${BASE_URL}/health/ready`).catch(() => null);
  if (!ready?.ok) throw new Error(`the service is not ready at ${BASE_URL}; start it with "npm start" first`);

  const sharedSecret = randomBytes(24).toString('base64url');
  let count = 0;
  let finish: () => void = () => undefined;
  const allArrived = new Promise<void>((resolve) => (finish = resolve));
  const { server, url } = await startReceiver({
    sharedSecret,
    onWebhook: (w) => {
      count += 1;
      const changes = w.changes ? ` changes=${JSON.stringify(w.changes)}` : '';
      process.stdout.write(
        `  ✔ signature verified  ${w.resourceType.padEnd(11)} ${w.action.padEnd(6)} resource ${w.resourceId}  webhook ${w.id}${changes}\n`,
      );
      if (count >= EXPECTED) finish();
    },
  });
  let key: string | null = null;
  const stop = () => {
    server.close();
    const disabled = key === null ? Promise.resolve() : disableWebhooks(key);
    void disabled.catch(() => undefined).then(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const demo = await demoOrganization();
    key = demo.key;
    process.stdout.write(
      `demo organization ${demo.organizationId}, API key (also saved in ${STATE_FILE}):\n  ${demo.key}\n` +
        `  try: curl -H "Authorization: Bearer ${demo.key}" ${BASE_URL}/v1/wallets\n`,
    );
    await api(key, 'PATCH', WEBHOOK_CONFIG, {
      url,
      sharedSecret,
      webhookTypes: ['transaction', 'nft', 'custodialAccount'],
      enabled: true,
    });
    process.stdout.write(`receiver listening at ${url}; making ${EXPECTED} writes...\n`);

    const alice = await api<{ id: string }>(key, 'POST', '/v1/wallets', { name: 'Alice' });
    const bob = await api<{ name: string | null }>(key, 'POST', '/v1/wallets', { name: 'Bob' });
    const token = await api<{ id: string }>(key, 'POST', '/v1/tokens', {
      contractAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      blockchainTokenId: String(Date.now()),
      metadata: { name: 'Demo NFT', image: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi' },
    });
    await api(key, 'POST', '/v1/transactions', { tokenId: token.id, toWalletId: alice.id });
    await api(key, 'PATCH', `/v1/tokens/${token.id}`, { metadata: { description: `Held by ${bob.name ?? 'Bob'} next` } });

    const timeout = new Promise<void>((_, reject) =>
      setTimeout(() => reject(new Error(`only ${count} of ${EXPECTED} webhooks arrived in 20 s`)), 20_000),
    );
    await Promise.race([allArrived, timeout]);
    process.stdout.write(
      `all ${EXPECTED} webhooks arrived and verified. The delivery log: GET ${BASE_URL}/api/organization/v1/current-organization/webhooks\n`,
    );
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    if (key !== null) await disableWebhooks(key);
    server.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
