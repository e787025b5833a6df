import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { OPERATOR_KEY, testEnv } from './support/test-app';
import { waitUntil } from './support/receiver';
import { freePort, ServiceProcess } from './support/service-process';

const run = promisify(execFile);

interface Answer {
  status: number;
  body: Record<string, any>;
}

function call(port: number, method: string, path: string, key?: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the real entry point', () => {
  const env = () =>
    testEnv({
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      QUEUE_PREFIX: `gs${Date.now().toString(36)}`,
      LOG_LEVEL: 'info',
      SECRETS_ENCRYPTION_KEYS: undefined,
      SECRETS_ENCRYPTION_KEY: undefined,
      WEBHOOK_ALLOW_HTTP: undefined,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: undefined,
    });

  describe('on SIGTERM', () => {
    let service: ServiceProcess;
    let db: Client;
    beforeAll(async () => {
      service = new ServiceProcess(await freePort(), env());
      db = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await db.connect();
      await service.ready();
    }, 120_000);
    afterAll(async () => {
      service.kill();
      await db.end();
    });

    it('warns once at start, listing each relaxed development default', () => {
      const warnings = service.output.filter((l) => l.includes('development defaults in force'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('NODE_ENV=test');
      expect(warnings[0]).toContain('SECRETS_ENCRYPTION_KEYS unset');
      expect(warnings[0]).toContain('WEBHOOK_ALLOW_HTTP=true');
      expect(warnings[0]).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true');
    });

    it('finishes a request in flight, refuses new ones, then exits 0', async () => {
      const { port } = service;
      const org = await call(port, 'POST', '/admin/v1/organizations', OPERATOR_KEY, { name: 'drain org' });
      expect(org.status).toBe(201);
      const key = await call(port, 'POST', `/admin/v1/organizations/${org.body.id}/api-keys`, OPERATOR_KEY, {
        name: 'a',
        roles: ['admin'],
      });
      const CONFIG = '/api/organization/v1/current-organization/webhook-config';
      expect((await call(port, 'PATCH', CONFIG, key.body.key, { url: 'http://127.0.0.1:9999/a' })).status).toBe(200);

      // The test holds the configuration's row lock, so the next change waits on it: a slow request.
      await db.query('begin');
      await db.query('select 1 from webhook_endpoint where id = $1 for update', [org.body.id]);
      const slow = call(port, 'PATCH', CONFIG, key.body.key, { url: 'http://127.0.0.1:9999/b' });
      // Watched from another session: within a transaction, pg_stat_activity is a frozen snapshot.
      const watcher = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await watcher.connect();
      await waitUntil(
        async () =>
          (
            await watcher.query(
              `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%webhook_endpoint%'`,
            )
          ).rows[0].n,
        (n) => n > 0,
        30_000,
      ).finally(() => watcher.end());

      service.signal('SIGTERM');
      // New connections are refused once the process has begun to drain.
      await waitUntil(
        () =>
          call(port, 'GET', '/health/live').then(
            () => 'accepted',
            (error: NodeJS.ErrnoException) => error.code ?? 'error',
          ),
        (outcome) => outcome === 'ECONNREFUSED',
        30_000,
      );

      await db.query('commit');
      const answer = await slow;
      expect(answer.status).toBe(200);
      expect(answer.body.url).toBe('http://127.0.0.1:9999/b');
      const exitCode = await service.exit;
      // The output comes with a failure, to say why the shutdown went wrong.
      expect({ exitCode, output: exitCode === 0 ? [] : service.output.slice(-30) }).toEqual({ exitCode: 0, output: [] });
    });
  });

  describe('start-up refusals', () => {
    const start = (overrides: Record<string, string | undefined>) =>
      run('npx', ['ts-node', '--swc', 'src/main.ts'], { env: { ...process.env, ...env(), ...overrides }, timeout: 90_000 });

    it('refuses to start without NODE_ENV, with one line naming it', async () => {
      const refused = start({ NODE_ENV: undefined });
      await expect(refused).rejects.toMatchObject({ code: 1 });
      const { stderr } = await refused.catch((error: { stderr: string }) => error);
      expect(stderr.trim().split('\n')).toEqual(['Invalid configuration: NODE_ENV must be development, test or production (it is unset)']);
    });

    it.each(['prod', 'staging', 'Production'])('refuses NODE_ENV=%s, naming the variable', async (value) => {
      await expect(start({ NODE_ENV: value })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`NODE_ENV must be development, test or production (got "${value}")`),
      });
    });

    it('refuses a MEDIA_STORAGE directory it cannot create, with one line naming it', async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'media-storage-')), 'a-file');
      writeFileSync(file, '');
      const refused = start({ MEDIA_STORAGE: join(file, 'media') });
      await expect(refused).rejects.toMatchObject({ code: 1 });
      const { stderr } = await refused.catch((error: { stderr: string }) => error);
      expect(stderr.trim().split('\n')).toEqual([
        `MEDIA_STORAGE ${join(file, 'media')} cannot be used: ENOTDIR (it must be a directory this process can create and write)`,
      ]);
    });

    it('refuses production without an explicit key, and with the development key', async () => {
      const refused = start({ NODE_ENV: 'production' });
      await expect(refused).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('SECRETS_ENCRYPTION_KEYS (or SECRETS_ENCRYPTION_KEY) is required when NODE_ENV=production'),
      });
      // Every setting production requires is named at once.
      const { stderr } = await refused.catch((error: { stderr: string }) => error);
      expect(stderr).toContain('AUDIT_CHAIN_KEY is required when NODE_ENV=production');
      expect(stderr).toContain('METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production');
      expect(stderr).toContain('MEDIA_SIGNING_KEY is required when NODE_ENV=production');
      const developmentKey = Buffer.alloc(32, 'nft-wallet-development-key-32byt').toString('base64');
      await expect(start({ NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: developmentKey })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('must not use the development key'),
      });
    });
  });
});
