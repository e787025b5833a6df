import { createCipheriv, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, signatureIsValid } from './support/webhooks';

const run = promisify(execFile);
const SECRET_1 = 'rotation-secret-one-0123456789';
const SECRET_2 = 'rotation-secret-two-0123456789';

/** The sealed format written before keys had ids, made here independently of the service. */
function legacySeal(plain: string, key: Buffer, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
}

describe('encryption key rotation (SECRETS_ENCRYPTION_KEYS, secrets:reseal)', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const ringA = `a:${keyA.toString('base64')}`;
  const ringBA = `b:${keyB.toString('base64')},a:${keyA.toString('base64')}`;
  const ringB = `b:${keyB.toString('base64')}`;
  let database: { url: string; drop: () => Promise<void> };
  let receiver: TestReceiver;
  let t: TestApp | null = null;
  const queuePrefix = `rot${Date.now().toString(36)}`;

  const start = async (keys: string) => {
    t = await createTestApp({ DATABASE_URL: database.url, QUEUE_PREFIX: queuePrefix, SECRETS_ENCRYPTION_KEYS: keys });
    return t;
  };
  const stop = async () => {
    await t?.close();
    t = null;
  };
  const sealedValues = async (): Promise<Map<string, string>> => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query('select organization_id, shared_secret_sealed from webhook_config order by organization_id');
      return new Map(rows.map((r: { organization_id: string; shared_secret_sealed: string }) => [r.organization_id, r.shared_secret_sealed]));
    } finally {
      await client.end();
    }
  };
  /** Makes a wallet and waits for its webhook; true when it arrived signed with `secret`. */
  const deliveryVerifies = async (app: TestApp, org: TestOrganization, secret: string): Promise<boolean> => {
    const walletId = await createWallet(app, org);
    const [webhook] = (await receiver.waitFor((r) => r.some((w) => w.body.resourceId === walletId))).filter(
      (w) => w.body.resourceId === walletId,
    );
    return signatureIsValid(webhook, secret);
  };
  const reseal = (keys: string) =>
    run('npx', ['ts-node', '--swc', 'src/cli.ts', 'secrets:reseal', '--batch-size', '1'], {
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: database.url, DB_MIGRATE_ON_START: 'false', SECRETS_ENCRYPTION_KEYS: keys },
      timeout: 60_000,
    });

  beforeAll(async () => {
    database = await createIsolatedDatabase('rotation');
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await stop();
    await receiver.stop();
    await database.drop();
  });

  it('keeps every delivery verifiable from key A, through B,A and a re-seal, to B alone', async () => {
    // Sealed with key A; org2's value in the format written before keys had ids.
    let app = await start(ringA);
    const org1 = await createOrganization(app);
    const org2 = await createOrganization(app);
    await configureWebhooks(app, org1, { url: receiver.url, sharedSecret: SECRET_1 });
    await configureWebhooks(app, org2, { url: receiver.url, sharedSecret: SECRET_2 });
    expect(await deliveryVerifies(app, org1, SECRET_1)).toBe(true);
    const client = new Client({ connectionString: database.url });
    await client.connect();
    await client.query('update webhook_config set shared_secret_sealed = $1 where organization_id = $2', [
      legacySeal(SECRET_2, keyA, org2.id),
      org2.id,
    ]);
    await client.end();
    expect(await deliveryVerifies(app, org2, SECRET_2)).toBe(true);
    expect((await sealedValues()).get(org1.id)).toMatch(/^v2\.a\./);
    await stop();

    // B seals from now on; A still opens what it sealed.
    app = await start(ringBA);
    expect(await deliveryVerifies(app, org1, SECRET_1)).toBe(true);
    expect(await deliveryVerifies(app, org2, SECRET_2)).toBe(true);

    // Re-seal while the service runs, one row per batch.
    const { stdout } = await reseal(ringBA);
    expect(JSON.parse(stdout.trim())).toEqual({
      keyId: 'b',
      columns: [
        { table: 'webhook_config', column: 'shared_secret_sealed', resealed: 2, changedMeanwhile: 0, unopenable: 0 },
        { table: 'webhook_config', column: 'previous_shared_secret_sealed', resealed: 0, changedMeanwhile: 0, unopenable: 0 },
      ],
    });
    const after = await sealedValues();
    expect(after.get(org1.id)).toMatch(/^v2\.b\./);
    expect(after.get(org2.id)).toMatch(/^v2\.b\./);
    expect(await deliveryVerifies(app, org1, SECRET_1)).toBe(true);

    // Running it again finds nothing left to do.
    const again = JSON.parse((await reseal(ringBA)).stdout.trim());
    expect(again.columns[0]).toMatchObject({ resealed: 0, unopenable: 0 });
    await stop();

    // Key A is gone: every secret still opens.
    app = await start(ringB);
    expect(await deliveryVerifies(app, org1, SECRET_1)).toBe(true);
    expect(await deliveryVerifies(app, org2, SECRET_2)).toBe(true);
  });

  it('fails, naming the count, when a stored secret opens under no configured key, and changes nothing', async () => {
    const before = await sealedValues();
    await expect(reseal(`c:${randomBytes(32).toString('base64')}`)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('2 sealed value(s) open under no configured key'),
    });
    expect(await sealedValues()).toEqual(before);
  });
});
