import { randomBytes } from 'node:crypto';
import { bearer, createApiKey, createOrganization } from './support/factories';
import { newAddress, nftApi } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, WEBHOOKS_PATH } from './support/webhooks';

/**
 * One representative run of everything that handles a secret, logged at debug level, then every
 * captured log line searched for every secret in every form it could leak in.
 */
describe('no secret reaches the logs', () => {
  const encryptionKey = randomBytes(32);
  const firstSecret = `first-shared-secret-${randomBytes(12).toString('hex')}`;
  const secondSecret = `second-shared-secret-${randomBytes(12).toString('hex')}`;
  const rejectedSecret = `rejected-shared-secret-${randomBytes(12).toString('hex')}`;
  const secrets = new Map<string, string>([
    ['operator key', OPERATOR_KEY],
    ['encryption key (base64)', encryptionKey.toString('base64')],
    ['encryption key (base64url)', encryptionKey.toString('base64url')],
    ['encryption key (hex)', encryptionKey.toString('hex')],
    ['first shared secret', firstSecret],
    ['second shared secret', secondSecret],
    ['rejected shared secret', rejectedSecret],
  ]);
  const addKey = (name: string, key: string) => {
    secrets.set(name, key);
    // The part after the prefix that is shown in clear.
    secrets.set(`${name} (secret part)`, key.slice('nftw_'.length + 8));
  };

  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    receiver = await new TestReceiver().start();
    t = await createTestApp({ LOG_LEVEL: 'debug', SECRETS_ENCRYPTION_KEY: encryptionKey.toString('base64') });

    // Operator actions.
    const org = await createOrganization(t);
    addKey('admin key', org.adminKey);
    const readKey = await createApiKey(t, org.id, ['read']);
    addKey('read key', readKey.key);
    await t.http().get('/admin/v1/organizations').set(bearer(OPERATOR_KEY)).expect(200);
    const writeKey = await t
      .http()
      .post('/api/organization/v1/current-organization/api-keys')
      .set(bearer(org.adminKey))
      .send({ name: 'writer', roles: ['write'] })
      .expect(201);
    addKey('write key', writeKey.body.key);

    // Webhook configuration, a refused change carrying a secret, and a rotation.
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: firstSecret });
    await t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ sharedSecret: rejectedSecret, url: 'ftp://nowhere' }).expect(400);
    await t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ sharedSecret: 'short' }).expect(400);

    // Data writes whose webhooks fail once, then arrive.
    receiver.behaviour = (n) => (n <= 2 ? { status: 500 } : { status: 200 });
    const api = nftApi(t, writeKey.body.key);
    const wallet = await api.wallet({ name: 'w' });
    const token = await api.token({ contractAddress: newAddress() });
    await t
      .http()
      .patch(`/v1/tokens/${token.id}`)
      .set(bearer(writeKey.body.key))
      .send({ metadata: { name: 'renamed' } })
      .expect(200);
    await api.mint(token.id, wallet.id, '3');
    await receiver.waitFor((r) => new Set(r.filter((w) => w.headers['x-service-webhook-attempt'] !== '1').map((w) => w.body.id)).size >= 2);
    await t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ sharedSecret: secondSecret }).expect(200);
    const sent = await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    await t.http().post(`${WEBHOOKS_PATH}/${sent.body.id}/redeliver`).set(bearer(org.adminKey)).expect(202);
    await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?status=pending`).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.length === 0,
    );
    await t.http().get('/api/organization/v1/current-organization/audit-log').set(bearer(org.adminKey)).expect(200);

    // Refused credentials: a key with one character changed, the operator key where it does not
    // belong, a key in the query string, and a revoked key.
    const typo = `${readKey.key.slice(0, -1)}${readKey.key.endsWith('A') ? 'B' : 'A'}`;
    addKey('mistyped key', typo);
    await t.http().get('/v1/wallets').set(bearer(typo)).expect(401);
    await t.http().get('/v1/wallets').set(bearer(OPERATOR_KEY)).expect(401);
    await t
      .http()
      .get(`/v1/wallets?apiKey=${encodeURIComponent(readKey.key)}`)
      .expect(401);
    // Keys where the service never reads them, under names no list would hold, and in the path.
    await t.http().get(`/v1/wallets?X-Api-Key=${readKey.key}`).expect(401);
    await t.http().get(`/v1/wallets?k=${readKey.key}&pageSize=5`).expect(401);
    await t.http().get(`/v1/wallets/${readKey.key}`).set(bearer(readKey.key)).expect(400);
    await t.http().get(`/v1/${readKey.key}/wallets`).expect(404);
    await t
      .http()
      .get(`/v1/wallets?q=${encodeURIComponent(OPERATOR_KEY)}`)
      .expect(401);
    await t
      .http()
      .get(`/admin/v1/${encodeURIComponent(OPERATOR_KEY)}`)
      .expect(404);
    await t.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${readKey.id}`).set(bearer(OPERATOR_KEY)).expect(204);
    await t.http().get('/v1/wallets').set(bearer(readKey.key)).expect(401);
    await t.close();
  }, 60_000);
  afterAll(async () => {
    await receiver.stop();
  });

  it('captured a whole run: operator, organization-admin, webhook-config and refused requests', () => {
    expect(t.logs.length).toBeGreaterThan(30);
    expect(t.logs.some((line) => line.includes('/webhook-config'))).toBe(true);
    expect(t.logs.some((line) => line.includes('/admin/v1/organizations'))).toBe(true);
    expect(t.logs.some((line) => line.includes('"statusCode":401'))).toBe(true);
  });

  it('has none of the secrets in any form, in any line', () => {
    const found: string[] = [];
    for (const [name, secret] of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(16);
      const forms = [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
      for (const line of t.logs) if (forms.some((form) => line.includes(form))) found.push(`${name}: ${line.slice(0, 200)}`);
    }
    expect(found).toEqual([]);
  });
});
