import { createCipheriv, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { openSecret } from '../src/common/crypto/secret-box';
import type { SecretKeyring } from '../src/config/secrets-config';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, signatureIsValid } from './support/webhooks';

const run = promisify(execFile);
const SECRET_1 = 'rotation-secret-one-0123456789';
const SECRET_2 = 'rotation-secret-two-0123456789';
const ENDPOINT_SECRET = 'rotation-endpoint-secret-0123456789';
const ENDPOINT_PREVIOUS_SECRET = 'rotation-endpoint-previous-0123456789';
const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';

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
      const { rows } = await client.query(
        'select organization_id, shared_secret_sealed from webhook_endpoint where is_default order by organization_id',
      );
      return new Map(
        rows.map((r: { organization_id: string; shared_secret_sealed: string }) => [r.organization_id, r.shared_secret_sealed]),
      );
    } finally {
      await client.end();
    }
  };
  const sealedEndpointValues = async (): Promise<unknown[]> => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      return (
        await client.query(
          'select id, shared_secret_sealed, previous_shared_secret_sealed from webhook_endpoint where not is_default order by id',
        )
      ).rows;
    } finally {
      await client.end();
    }
  };
  /** The endpoint's sealed secrets as stored, and what they open to under `keyring`. */
  const endpointSecrets = async (endpointId: string, organizationId: string, keyring: SecretKeyring) => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'select shared_secret_sealed, previous_shared_secret_sealed from webhook_endpoint where id = $1',
        [endpointId],
      );
      const [row] = rows as Array<{ shared_secret_sealed: string; previous_shared_secret_sealed: string }>;
      return {
        current: row.shared_secret_sealed,
        previous: row.previous_shared_secret_sealed,
        opened: [
          openSecret(row.shared_secret_sealed, keyring, organizationId),
          openSecret(row.previous_shared_secret_sealed, keyring, organizationId),
        ],
      };
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
    await client.query('update webhook_endpoint set shared_secret_sealed = $1 where id = $2', [
      legacySeal(SECRET_2, keyA, org2.id),
      org2.id,
    ]);
    await client.end();
    expect(await deliveryVerifies(app, org2, SECRET_2)).toBe(true);
    expect((await sealedValues()).get(org1.id)).toMatch(/^v2\.a\./);
    // An endpoint beside the default one, mid-rotation: both of its secrets are sealed with key A.
    const endpoint = await app
      .http()
      .post(ENDPOINTS_PATH)
      .set(bearer(org1.adminKey))
      // Signing asymmetrically and with OAuth2 too: its Ed25519 private keys and client secret are
      // sealed secrets like the shared ones.
      .send({
        url: receiver.url,
        webhookTypes: [],
        enabled: false,
        sharedSecret: ENDPOINT_PREVIOUS_SECRET,
        signing: { asymmetric: true },
        auth: {
          type: 'oauth2ClientCredentials',
          tokenUrl: receiver.urlFor('/token'),
          clientId: 'client',
          clientSecret: 'client-secret-01',
        },
      })
      .expect(201);
    const endpointId: string = endpoint.body.id;
    await app
      .http()
      .post(`${ENDPOINTS_PATH}/${endpointId}/rotate-secret`)
      .set(bearer(org1.adminKey))
      .send({ sharedSecret: ENDPOINT_SECRET, previousSecretValidSeconds: 604_800 })
      .expect(200);
    const sealedWithA = await endpointSecrets(endpointId, org1.id, app.config.secretsEncryptionKey);
    expect(sealedWithA.current).toMatch(/^v2\.a\./);
    expect(sealedWithA.previous).toMatch(/^v2\.a\./);
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
        // Both organizations' default endpoints and the one other endpoint.
        { table: 'webhook_endpoint', column: 'shared_secret_sealed', resealed: 3, changedMeanwhile: 0, unopenable: 0 },
        { table: 'webhook_endpoint', column: 'previous_shared_secret_sealed', resealed: 1, changedMeanwhile: 0, unopenable: 0 },
        // The other endpoint's key pair and the pair its rotation replaced.
        { table: 'webhook_endpoint', column: 'signing_private_key_sealed', resealed: 1, changedMeanwhile: 0, unopenable: 0 },
        { table: 'webhook_endpoint', column: 'previous_signing_private_key_sealed', resealed: 1, changedMeanwhile: 0, unopenable: 0 },
        { table: 'webhook_endpoint', column: 'auth_client_secret_sealed', resealed: 1, changedMeanwhile: 0, unopenable: 0 },
        { table: 'webhook_endpoint', column: 'tls_client_key_sealed', resealed: 0, changedMeanwhile: 0, unopenable: 0 },
        // Broker credentials are re-sealed too (no endpoint here publishes to a broker).
        { table: 'webhook_endpoint', column: 'destination_credentials_sealed', resealed: 0, changedMeanwhile: 0, unopenable: 0 },
      ],
    });
    const after = await sealedValues();
    expect(after.get(org1.id)).toMatch(/^v2\.b\./);
    expect(after.get(org2.id)).toMatch(/^v2\.b\./);
    expect(await deliveryVerifies(app, org1, SECRET_1)).toBe(true);
    const endpointAfter = await endpointSecrets(endpointId, org1.id, app.config.secretsEncryptionKey);
    expect(endpointAfter.current).toMatch(/^v2\.b\./);
    expect(endpointAfter.previous).toMatch(/^v2\.b\./);

    // Running it again finds nothing left to do.
    const again = JSON.parse((await reseal(ringBA)).stdout.trim());
    for (const column of again.columns) expect(column).toMatchObject({ resealed: 0, unopenable: 0 });
    await stop();

    // Key A is gone: every secret still opens.
    app = await start(ringB);
    expect(await deliveryVerifies(app, org1, SECRET_1)).toBe(true);
    expect(await deliveryVerifies(app, org2, SECRET_2)).toBe(true);
    expect((await endpointSecrets(endpointId, org1.id, app.config.secretsEncryptionKey)).opened).toEqual([
      ENDPOINT_SECRET,
      ENDPOINT_PREVIOUS_SECRET,
    ]);
    // The endpoint still answers as it did, its rotation window intact.
    const shown = await app.http().get(`${ENDPOINTS_PATH}/${endpointId}`).set(bearer(org1.adminKey)).expect(200);
    expect(shown.body).toEqual(
      expect.objectContaining({
        hasSharedSecret: true,
        previousSecretExpiresAtUtc: expect.any(String),
        publicKey: expect.stringMatching(/^whpk_/),
        previousPublicKey: expect.stringMatching(/^whpk_/),
      }),
    );
  });

  it('fails, naming the count, when a stored secret opens under no configured key, and changes nothing', async () => {
    const before = await sealedValues();
    const endpointsBefore = await sealedEndpointValues();
    expect(endpointsBefore).toHaveLength(1);
    // Two configurations' secrets, and the endpoint's current and previous ones, its two signing keys and its client secret.
    await expect(reseal(`c:${randomBytes(32).toString('base64')}`)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('7 sealed value(s) open under no configured key'),
    });
    expect(await sealedValues()).toEqual(before);
    expect(await sealedEndpointValues()).toEqual(endpointsBefore);
  });
});
