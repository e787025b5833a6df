import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bearer, createOrganization } from './support/factories';
import { ReceivedWebhook, TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet } from './support/webhooks';

const run = promisify(execFile);
const README = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const SECRET = 'readme-snippet-secret-0001';
const NEW_SECRET = 'readme-snippet-secret-0002';

/** The fenced block of `language` that contains `marker`, exactly as README.md shows it. */
function readmeBlock(language: string, marker: string): string {
  const blocks = [...README.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
  const block = blocks.find((text) => text.includes(marker));
  if (!block) throw new Error(`README.md has no ${language} block containing ${marker}`);
  return block;
}

describe('the verification snippets in README.md, against real deliveries', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await new TestReceiver().start();
    dir = mkdtempSync(join(tmpdir(), 'readme-snippets-'));
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs README's Python function, unchanged, on the exact bytes and headers received. */
  async function python(webhook: ReceivedWebhook, secret: string, body: Buffer = webhook.raw): Promise<boolean> {
    const script = join(dir, 'verify.py');
    const driver = [
      'import json, sys',
      'case = json.load(sys.stdin)',
      'print(verify_webhook(base64.b64decode(case["body"]), case["headers"], case["secret"]))',
    ].join('\n');
    writeFileSync(script, `${readmeBlock('python', 'def verify_webhook')}\n${driver}\n`);
    const headers = Object.fromEntries(Object.entries(webhook.headers).map(([name, value]) => [name, [value].flat()[0]]));
    const child = run('python3', [script], { timeout: 30_000 });
    child.child.stdin!.end(JSON.stringify({ body: body.toString('base64'), headers, secret }));
    const { stdout } = await child;
    expect(['True', 'False']).toContain(stdout.trim());
    return stdout.trim() === 'True';
  }

  it('Python (standard library only) verifies a delivered webhook and refuses a tampered one', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    const walletId = await createWallet(t, org, 'python');
    const [webhook] = (await receiver.waitFor((r) => r.some((w) => w.body.resourceId === walletId))).filter(
      (w) => w.body.resourceId === walletId,
    );

    expect(await python(webhook, SECRET)).toBe(true);
    expect(await python(webhook, 'some-other-secret-0001')).toBe(false);
    expect(await python(webhook, SECRET, Buffer.from(webhook.raw.toString('utf8').replace('"create"', '"update"')))).toBe(false);
    // Without webhook-signature it is refused: the legacy header alone cannot stop a replay.
    const seedOnly = { ...webhook, headers: { ...webhook.headers, 'webhook-signature': undefined } };
    expect(await python(seedOnly, SECRET)).toBe(false);
    // A replayed webhook with an old timestamp fails even though its signature once matched.
    const stale = {
      ...webhook,
      headers: { ...webhook.headers, 'webhook-timestamp': String(Number(webhook.headers['webhook-timestamp']) - 600) },
    };
    expect(await python(stale, SECRET)).toBe(false);

    // openssl, as README shows it, gives both signatures of the same bytes.
    const bodyFile = join(dir, 'body.json');
    writeFileSync(bodyFile, webhook.raw);
    const [seedLine, standardLine] = readmeBlock('sh', 'openssl dgst').trim().split('\n');
    const sh = (line: string) =>
      run('sh', ['-c', line], {
        cwd: dir,
        env: {
          ...process.env,
          SHARED_SECRET: SECRET,
          WEBHOOK_ID: String(webhook.headers['webhook-id']),
          WEBHOOK_TIMESTAMP: String(webhook.headers['webhook-timestamp']),
        },
      });
    expect((await sh(seedLine)).stdout.trim()).toBe(webhook.headers['x-service-webhook-hmac']);
    expect(`v1,${(await sh(standardLine)).stdout.trim()}`).toBe(webhook.headers['webhook-signature']);
  });

  it('Python verifies with either secret during a rotation', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await t
      .http()
      .post(`${CONFIG_PATH}/rotate-secret`)
      .set(bearer(org.adminKey))
      .send({ sharedSecret: NEW_SECRET, previousSecretValidSeconds: 300 })
      .expect(200);
    const walletId = await createWallet(t, org, 'rotation');
    const webhook = (await receiver.waitFor((r) => r.some((w) => w.body.resourceId === walletId))).find(
      (w) => w.body.resourceId === walletId,
    )!;
    expect(await python(webhook, NEW_SECRET)).toBe(true);
    expect(await python(webhook, SECRET)).toBe(true);
    const seedOnly = { ...webhook, headers: { ...webhook.headers, 'webhook-signature': undefined } };
    expect(await python(seedOnly, SECRET)).toBe(false);
    expect(await python(seedOnly, NEW_SECRET)).toBe(false);
  });
});
