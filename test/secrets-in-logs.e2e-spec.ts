import { MikroORM } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSecret } from '../src/common/crypto/secret-box';
import { listenMutualTls, makePki } from './support/pki';
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
  /** Every answer and the audit log of the run, searched like the log lines. */
  const answers: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'secrets-'));
  const pki = makePki(dir);
  const clientSecret = `oauth2-client-secret-${randomBytes(12).toString('hex')}`;
  const rejectedClientSecret = `rejected-client-secret-${randomBytes(12).toString('hex')}`;
  const accessToken = `access-token-${randomBytes(12).toString('hex')}`;
  secrets.set('OAuth2 client secret', clientSecret);
  secrets.set('refused OAuth2 client secret', rejectedClientSecret);
  secrets.set('OAuth2 access token', accessToken);
  // The base64 body of each PEM key, line by line (a log line would hold at least one).
  for (const [name, pem] of [
    ['TLS client key', pki.clientKey],
    ['refused TLS client key', pki.strangerKey],
  ]) {
    pem
      .split('\n')
      .filter((line) => line.length >= 16 && !line.startsWith('-----'))
      .forEach((line, i) => secrets.set(`${name} line ${i + 1}`, line));
  }
  let tokenServer: HttpServer;
  let https: HttpsServer;

  beforeAll(async () => {
    receiver = await new TestReceiver().start();
    tokenServer = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: accessToken, expires_in: 3600 }));
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    https = await listenMutualTls(pki);
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

    // Endpoints for stricter receivers: an Ed25519 key pair and OAuth2, and mutual TLS; and
    // refused requests carrying a client secret and a client key.
    const endpoints = '/api/organization/v1/current-organization/webhook-endpoints';
    const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;
    const strict = await t
      .http()
      .post(endpoints)
      .set(bearer(org.adminKey))
      .send({
        url: receiver.urlFor('/strict'),
        webhookTypes: ['nft', 'transaction'],
        signing: { asymmetric: true },
        auth: { type: 'oauth2ClientCredentials', tokenUrl, clientId: 'client', clientSecret },
      })
      .expect(201);
    await t.http().post(`${endpoints}/${strict.body.id}/rotate-secret`).set(bearer(org.adminKey)).send({}).expect(200);
    const mtls = await t
      .http()
      .post(endpoints)
      .set(bearer(org.adminKey))
      .send({
        url: `https://127.0.0.1:${(https.address() as AddressInfo).port}/mtls`,
        webhookTypes: ['nft', 'transaction'],
        tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey, caCertificate: pki.ca },
      })
      .expect(201);
    answers.push(strict.text, mtls.text);
    await t
      .http()
      .post(endpoints)
      .set(bearer(org.adminKey))
      .send({
        url: receiver.url,
        webhookTypes: [],
        auth: { type: 'oauth2ClientCredentials', tokenUrl: 'ftp://tokens', clientId: 'c', clientSecret: rejectedClientSecret },
      })
      .expect(400)
      .then((res) => answers.push(res.text));
    await t
      .http()
      .post(endpoints)
      .set(bearer(org.adminKey))
      .send({ url: receiver.url, webhookTypes: [], tls: { clientCertificate: pki.clientCert, clientKey: pki.strangerKey } })
      .expect(400)
      .then((res) => answers.push(res.text));
    const rows: { organization_id: string; signing_private_key_sealed: string; previous_signing_private_key_sealed: string }[] = await t.app
      .get(MikroORM)
      .em.getConnection()
      .execute(
        `select organization_id, signing_private_key_sealed, previous_signing_private_key_sealed from webhook_endpoint where id = ?`,
        [strict.body.id],
      );
    secrets.set('Ed25519 private key', openSecret(rows[0].signing_private_key_sealed, t.config.secretsEncryptionKey, org.id));
    secrets.set(
      'previous Ed25519 private key',
      openSecret(rows[0].previous_signing_private_key_sealed, t.config.secretsEncryptionKey, org.id),
    );

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
    answers.push((await t.http().get('/api/organization/v1/current-organization/audit-log').set(bearer(org.adminKey)).expect(200)).text);
    answers.push((await t.http().get(endpoints).set(bearer(org.adminKey)).expect(200)).text);
    answers.push((await t.http().get(`${WEBHOOKS_PATH}?pageSize=1000`).set(bearer(org.adminKey)).expect(200)).text);
    expect(receiver.received.some((w) => w.path === '/strict' && w.headers.authorization === `Bearer ${accessToken}`)).toBe(true);

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
    tokenServer.closeAllConnections();
    await new Promise<void>((resolve) => tokenServer.close(() => resolve()));
    https.closeAllConnections();
    await new Promise<void>((resolve) => https.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
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

  it('has none of the transport secrets (private keys, client keys, client secrets, tokens) in any answer or audit entry', () => {
    expect(answers.length).toBeGreaterThanOrEqual(7);
    const found: string[] = [];
    for (const [name, secret] of secrets) {
      if (!/Ed25519|OAuth2|TLS/.test(name)) continue;
      for (const answer of answers) if (answer.includes(secret) || answer.includes(JSON.stringify(secret).slice(1, -1))) found.push(name);
    }
    expect(found).toEqual([]);
  });
});
