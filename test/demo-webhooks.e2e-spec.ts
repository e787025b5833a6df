import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bearer } from './support/factories';
import { ServiceProcess } from './support/service-process';
import { testEnv } from './support/test-app';

const run = promisify(execFile);

describe('npm run demo:webhooks', () => {
  let service: ServiceProcess;
  let dir: string;
  beforeAll(async () => {
    service = await ServiceProcess.start(testEnv());
    dir = mkdtempSync(join(tmpdir(), 'demo-webhooks-'));
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the demo key and five verified webhooks, and leaves the configuration disabled', async () => {
    const stateFile = join(dir, 'demo.json');
    const { stdout } = await run(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--swc', 'scripts/demo-webhooks.ts'], {
      env: { ...process.env, ...testEnv(), BASE_URL: service.url, DEMO_STATE_FILE: stateFile },
      timeout: 90_000,
    });
    const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as { organizationId: string; key: string };
    const lines = stdout.split('\n');
    expect(lines).toContain(`demo organization ${saved.organizationId}, API key (also saved in ${stateFile}):`);
    expect(lines).toContain(`  ${saved.key}`);
    // Five writes; a token image fetched afterwards may add an update of its own.
    expect(lines.filter((l) => l.startsWith('  ✔ signature verified')).length).toBeGreaterThanOrEqual(5);
    expect(lines).toContain('webhook configuration disabled again (its receiver stops with this demo)');

    // The printed key works, and nothing is left sending to the receiver that has gone.
    const config = await service.client
      .http()
      .get('/api/organization/v1/current-organization/webhook-config')
      .set(bearer(saved.key))
      .expect(200);
    expect(config.body.enabled).toBe(false);
  }, 120_000);
});
