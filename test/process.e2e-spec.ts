import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { bearer } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);
const TS_NODE = ['ts-node', '--swc'];

describe('operator CLI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('organization:create prints one JSON object whose admin key works', async () => {
    const { stdout } = await run('npx', [...TS_NODE, 'src/cli.ts', 'organization:create', '--name', 'CLI Org'], {
      env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, DB_MIGRATE_ON_START: 'false' },
      timeout: 60_000,
    });
    const printed = JSON.parse(stdout.trim());
    expect(Object.keys(printed).sort()).toEqual(['apiKey', 'organization']);
    expect(Object.keys(printed.organization).sort()).toEqual(['createdAtUtc', 'id', 'name']);
    expect(printed.organization.name).toBe('CLI Org');
    expect(Object.keys(printed.apiKey).sort()).toEqual(['id', 'key', 'roles']);
    expect(printed.apiKey.roles).toEqual(['admin']);

    const keys = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(printed.apiKey.key)).expect(200);
    expect(keys.body.apiKeys.map((k: { id: string }) => k.id)).toEqual([printed.apiKey.id]);
  });

  it("apikey:create adds an auditor key to an existing organization: it reads that organization's audit log and changes nothing", async () => {
    const env = { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, DB_MIGRATE_ON_START: 'false' };
    const created = JSON.parse(
      (await run('npx', [...TS_NODE, 'src/cli.ts', 'organization:create', '--name', 'CLI Audited'], { env, timeout: 60_000 })).stdout,
    );
    const { stdout } = await run(
      'npx',
      [...TS_NODE, 'src/cli.ts', 'apikey:create', '--organization', created.organization.id, '--roles', 'auditor'],
      { env, timeout: 60_000 },
    );
    const printed = JSON.parse(stdout.trim());
    expect(Object.keys(printed).sort()).toEqual(['apiKey', 'organizationId']);
    expect(printed.organizationId).toBe(created.organization.id);
    expect(printed.apiKey.roles).toEqual(['auditor']);

    // One organization with two keys, not a second organization.
    const keys = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(created.apiKey.key)).expect(200);
    expect(keys.body.apiKeys.map((k: { id: string }) => k.id).sort()).toEqual([created.apiKey.id, printed.apiKey.id].sort());
    await t.http().get('/api/organization/v1/current-organization/audit-log/verify').set(bearer(printed.apiKey.key)).expect(200);
    await t
      .http()
      .post('/api/organization/v1/current-organization/api-keys')
      .set(bearer(printed.apiKey.key))
      .send({ name: 'x', roles: ['read'] })
      .expect(403);
  });

  it('apikey:create for an organization that does not exist says so with exit code 1 and creates nothing', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    await expect(
      run('npx', [...TS_NODE, 'src/cli.ts', 'apikey:create', '--organization', missing, '--roles', 'auditor'], {
        env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, DB_MIGRATE_ON_START: 'false' },
        timeout: 60_000,
      }),
    ).rejects.toMatchObject({ code: 1, stdout: '', stderr: `ORGANIZATION_NOT_FOUND: Organization ${missing} does not exist.\n` });
  });

  it('apikey:create without --organization answers a usage message and exit code 2', async () => {
    await expect(run('npx', [...TS_NODE, 'src/cli.ts', 'apikey:create', '--roles', 'auditor'], { timeout: 60_000 })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--organization is required'),
    });
  });

  it("README's first-organization block, pasted as it is, leaves one organization with its admin key in API_KEY and an auditor key", async () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const block = [...readme.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('apikey:create'));
    expect(block).toBeDefined();
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${block}\necho "API_KEY=$API_KEY"`], {
      env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, DB_MIGRATE_ON_START: 'false' },
      timeout: 120_000,
    });
    const lines = stdout.trim().split('\n');
    const created = JSON.parse(lines[0]);
    const auditor = JSON.parse(lines[1]);
    expect(lines[2]).toBe(`API_KEY=${created.apiKey.key}`);
    expect(auditor.organizationId).toBe(created.organization.id);
    expect(auditor.apiKey.roles).toEqual(['auditor']);
    const keys = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(created.apiKey.key)).expect(200);
    expect(keys.body.apiKeys.map((k: { name: string; roles: string[] }) => [k.name, k.roles]).sort()).toEqual([
      ['admin', ['admin']],
      ['audit', ['auditor']],
    ]);
  });

  it('keeps stdout to the one JSON object when it migrates a database first (the progress goes to stderr)', async () => {
    const fresh = new URL(process.env.TEST_DATABASE_URL!);
    fresh.pathname = `${fresh.pathname}_cli_fresh`;
    try {
      const { stdout, stderr } = await run('npx', [...TS_NODE, 'src/cli.ts', 'organization:create', '--name', 'Fresh'], {
        env: { ...process.env, DATABASE_URL: fresh.toString(), DB_MIGRATE_ON_START: 'true' },
        timeout: 120_000,
      });
      expect(stdout.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(stdout).organization.name).toBe('Fresh');
      expect(stderr).toContain('Migration20261122000000Foundation');
    } finally {
      const pg = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await pg.connect();
      await pg.query(`drop database if exists "${fresh.pathname.slice(1)}" with (force)`);
      await pg.end();
    }
  });

  it('refuses an unknown role with a usage message and exit code 2', async () => {
    await expect(
      run('npx', [...TS_NODE, 'src/cli.ts', 'organization:create', '--name', 'X', '--roles', 'root'], { timeout: 60_000 }),
    ).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--roles takes') });
  });

  it('refuses a missing --name with a usage message and exit code 2', async () => {
    await expect(run('npx', [...TS_NODE, 'src/cli.ts', 'organization:create'], { timeout: 60_000 })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--name is required'),
    });
  });
});

describe('start-up configuration check', () => {
  it('stops the process with a message naming the bad variable', async () => {
    await expect(
      run('npx', [...TS_NODE, 'src/main.ts'], { env: { ...process.env, PORT: 'eighty' }, timeout: 60_000 }),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('PORT must be an integer') });
  });
});
