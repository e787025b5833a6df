import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
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

  it('issues an auditor key with --roles auditor: it reads the audit log and changes nothing', async () => {
    const { stdout } = await run('npx', [...TS_NODE, 'src/cli.ts', 'organization:create', '--name', 'CLI Audited', '--roles', 'auditor'], {
      env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, DB_MIGRATE_ON_START: 'false' },
      timeout: 60_000,
    });
    const printed = JSON.parse(stdout.trim());
    expect(printed.apiKey.roles).toEqual(['auditor']);
    await t.http().get('/api/organization/v1/current-organization/audit-log/verify').set(bearer(printed.apiKey.key)).expect(200);
    await t
      .http()
      .post('/api/organization/v1/current-organization/api-keys')
      .set(bearer(printed.apiKey.key))
      .send({ name: 'x', roles: ['read'] })
      .expect(403);
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
