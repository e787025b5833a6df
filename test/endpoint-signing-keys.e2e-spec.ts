import { MikroORM } from '@mikro-orm/postgresql';
import { createPublicKey, KeyObject, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { openSecret } from '../src/common/crypto/secret-box';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { ReceivedWebhook, TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { createWallet } from './support/webhooks';

const BASE = '/api/organization/v1/current-organization/webhook-endpoints';
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const SECRET = 'asymmetric-endpoint-secret-01';
const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];

/** What a receiver does with `whpk_…`: the raw 32-byte Ed25519 key, nothing of the service's code. */
function publicKeyOf(label: string): KeyObject {
  expect(label).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
  const raw = Buffer.from(label.slice('whpk_'.length), 'base64');
  expect(raw).toHaveLength(32);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** The v1a entries of a received webhook, in order. */
const v1aEntries = (webhook: ReceivedWebhook) =>
  String(webhook.headers['webhook-signature'])
    .split(' ')
    .filter((entry) => entry.startsWith('v1a,'))
    .map((entry) => Buffer.from(entry.slice(4), 'base64'));

/** A receiver's check of one v1a signature, with Node's own crypto. */
function v1aVerifies(webhook: ReceivedWebhook, key: KeyObject, signature: Buffer): boolean {
  const signed = Buffer.concat([
    Buffer.from(`${String(webhook.headers['webhook-id'])}.${String(webhook.headers['webhook-timestamp'])}.`),
    webhook.raw,
  ]);
  return verify(null, signed, key, signature);
}

describe('asymmetric (Ed25519, v1a) webhook signatures', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  const newEndpoint = async (org: TestOrganization, path: string, body: object = {}) =>
    (
      await t
        .http()
        .post(BASE)
        .set(bearer(org.adminKey))
        .send({ url: receiver.urlFor(path), webhookTypes: ALL_TYPES, sharedSecret: SECRET, ...body })
        .expect(201)
    ).body;

  /** Creates a wallet and waits for its webhook at `path`. */
  const nextWebhook = async (org: TestOrganization, path: string): Promise<ReceivedWebhook> => {
    const walletId = await createWallet(t, org);
    const received = await receiver.waitFor((r) => r.some((w) => w.path === path && w.body.resourceId === walletId));
    return received.find((w) => w.path === path && w.body.resourceId === walletId) as ReceivedWebhook;
  };

  it('signs every webhook with the endpoint key beside the v1 entries; a receiver verifies it with the public key alone', async () => {
    const org = await createOrganization(t);
    const created = await newEndpoint(org, '/asym-1', { signing: { asymmetric: true } });
    expect(created.previousPublicKey).toBeNull();
    const publicKey = publicKeyOf(created.publicKey);
    const shown = await t.http().get(`${BASE}/${created.id}`).set(bearer(org.adminKey)).expect(200);
    expect(shown.body.publicKey).toBe(created.publicKey);

    const webhook = await nextWebhook(org, '/asym-1');
    const entries = String(webhook.headers['webhook-signature']).split(' ');
    expect(entries.map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1a']);
    const [signature] = v1aEntries(webhook);
    expect(v1aVerifies(webhook, publicKey, signature)).toBe(true);
    // Altered bytes do not verify.
    expect(v1aVerifies({ ...webhook, raw: Buffer.concat([webhook.raw, Buffer.from(' ')]) }, publicKey, signature)).toBe(false);

    // The npm standardwebhooks library (1.1.x) verifies the v1 entry as before, and has no v1a support:
    // given only the v1a entry it finds no signature it knows.
    const whsec = `whsec_${Buffer.from(SECRET, 'utf8').toString('base64')}`;
    const headers = webhook.headers as Record<string, string>;
    expect(() => new Webhook(whsec).verify(webhook.raw.toString('utf8'), headers)).not.toThrow();
    expect(() => new Webhook(whsec).verify(webhook.raw.toString('utf8'), { ...headers, 'webhook-signature': entries[1] })).toThrow(
      /No matching signature/,
    );

    // The seed's header is unchanged.
    expect(webhook.headers['x-service-webhook-hmac']).toEqual(expect.any(String));
  });

  it('rotates the key pair with the secret, sends both v1a entries during the overlap, and drops it on request', async () => {
    const org = await createOrganization(t);
    const created = await newEndpoint(org, '/asym-2', { signing: { asymmetric: true } });
    await t
      .http()
      .post(`${BASE}/${created.id}/rotate-secret`)
      .set(bearer(org.adminKey))
      .send({ previousSecretValidSeconds: 3600 })
      .expect(200);
    const rotated = (await t.http().get(`${BASE}/${created.id}`).set(bearer(org.adminKey)).expect(200)).body;
    expect(rotated.previousPublicKey).toBe(created.publicKey);
    expect(rotated.publicKey).not.toBe(created.publicKey);

    const during = await nextWebhook(org, '/asym-2');
    const [first, second] = v1aEntries(during);
    expect(v1aEntries(during)).toHaveLength(2);
    expect(v1aVerifies(during, publicKeyOf(rotated.publicKey), first)).toBe(true);
    expect(v1aVerifies(during, publicKeyOf(created.publicKey), second)).toBe(true);

    // The audit log shows the public keys that changed; the private ones appear nowhere.
    const audit = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).query({ pageSize: 1000 }).expect(200);
    const rotation = audit.body.entries.find((e: { action: string }) => e.action === 'webhookEndpoint.rotateSecret');
    expect(rotation.changes.publicKey).toEqual({ from: created.publicKey, to: rotated.publicKey });
    const rows = await t.app
      .get(MikroORM)
      .em.getConnection()
      .execute(`select signing_private_key_sealed, previous_signing_private_key_sealed from webhook_endpoint where id = ?`, [created.id]);
    const privateKeys = [rows[0].signing_private_key_sealed, rows[0].previous_signing_private_key_sealed].map((sealed: string) =>
      openSecret(sealed, t.config.secretsEncryptionKey, org.id),
    );
    expect(privateKeys[0]).toMatch(/^[A-Za-z0-9+/]+=*$/);
    for (const key of privateKeys) {
      expect(audit.text).not.toContain(key);
      expect(JSON.stringify(rotated)).not.toContain(key);
      for (const line of t.logs) expect(line).not.toContain(key);
    }

    // Switched off: no key pair, no v1a entry.
    const off = await t
      .http()
      .patch(`${BASE}/${created.id}`)
      .set(bearer(org.adminKey))
      .send({ signing: { asymmetric: false } })
      .expect(200);
    expect(off.body).toEqual(expect.objectContaining({ publicKey: null, previousPublicKey: null }));
    const after = await nextWebhook(org, '/asym-2');
    expect(v1aEntries(after)).toHaveLength(0);
    expect(String(after.headers['webhook-signature'])).toMatch(/^v1,/);
  });

  it('refuses a malformed signing field with a 400 naming it, changing nothing', async () => {
    const org = await createOrganization(t);
    const created = await newEndpoint(org, '/asym-3');
    expect(created.publicKey).toBeNull();
    for (const signing of [{ asymmetric: 'yes' }, {}, 'true']) {
      const res = await t.http().patch(`${BASE}/${created.id}`).set(bearer(org.adminKey)).send({ signing });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.errors)).toContain('signing');
    }
    const shown = await t.http().get(`${BASE}/${created.id}`).set(bearer(org.adminKey)).expect(200);
    expect(shown.body.publicKey).toBeNull();
    expect(shown.body.updatedAtUtc).toBe(created.updatedAtUtc);
  });
});
