import { createHmac, generateKeyPairSync, KeyObject, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { buildWebhookBody } from './webhook.rules';
import { signWebhookBody, webhookSignatureHeaders } from './webhook-signature';

const ID = '019a0000-0000-7000-8000-000000000001';
const BODY = '{"organizationId":"o","action":"create","id":"019a0000-0000-7000-8000-000000000001","changes":{"name":"Zoë"}}';
const NEW = 'the-new-shared-secret-01';
const OLD = 'the-old-shared-secret-01';
const whsec = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
const seedHmac = (secret: string) => createHmac('sha256', secret).update(BODY).digest('base64');

describe('webhookSignatureHeaders', () => {
  const now = new Date();

  it('signs with the current secret only when there is no previous one', () => {
    const headers = webhookSignatureHeaders(ID, BODY, { secret: NEW }, now);
    expect(headers).toEqual({
      'x-service-webhook-hmac': seedHmac(NEW),
      'webhook-id': ID,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    });
    // A verifier nobody here wrote accepts it, with the key passed the way README.md shows.
    expect(new Webhook(whsec(NEW)).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
    expect(() => new Webhook(whsec(OLD)).verify(BODY, { ...headers })).toThrow();
    expect(() => new Webhook(whsec(NEW)).verify(`${BODY} `, { ...headers })).toThrow();
  });

  it('signs with both secrets, the new one first, while the previous one is valid', () => {
    const previous = { secret: OLD, expiresAt: new Date(now.getTime() + 1000) };
    const headers = webhookSignatureHeaders(ID, Buffer.from(BODY), { secret: NEW, previous }, now);
    expect(headers['x-service-webhook-hmac']).toBe(seedHmac(NEW));
    expect(headers['x-service-webhook-hmac-previous']).toBe(seedHmac(OLD));
    const entries = headers['webhook-signature'].split(' ');
    expect(entries).toHaveLength(2);
    expect(() => new Webhook(whsec(NEW)).verify(BODY, { ...headers, 'webhook-signature': entries[0] })).not.toThrow();
    expect(() => new Webhook(whsec(OLD)).verify(BODY, { ...headers, 'webhook-signature': entries[1] })).not.toThrow();
    expect(() => new Webhook(whsec(OLD)).verify(BODY, { ...headers })).not.toThrow();
  });

  it('drops the previous secret for an attempt signed at or after its expiry', () => {
    for (const expiresAt of [now, new Date(now.getTime() - 1)]) {
      const headers = webhookSignatureHeaders(ID, BODY, { secret: NEW, previous: { secret: OLD, expiresAt } }, now);
      expect(headers['x-service-webhook-hmac-previous']).toBeUndefined();
      expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
      expect(() => new Webhook(whsec(OLD)).verify(BODY, { ...headers })).toThrow();
      expect(() => new Webhook(whsec(NEW)).verify(BODY, { ...headers })).not.toThrow();
    }
  });

  it('uses the timestamp of the signing instant in whole seconds', () => {
    const at = new Date('2026-11-23T10:00:00.999Z');
    expect(webhookSignatureHeaders(ID, BODY, { secret: NEW }, at)['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
  });

  describe('asymmetric (v1a) entries', () => {
    const current = generateKeyPairSync('ed25519');
    const old = generateKeyPairSync('ed25519');
    const v1a = (headers: { 'webhook-signature': string }) =>
      headers['webhook-signature']
        .split(' ')
        .filter((entry) => entry.startsWith('v1a,'))
        .map((entry) => Buffer.from(entry.slice(4), 'base64'));
    const verifies = (headers: { 'webhook-id': string; 'webhook-timestamp': string }, key: KeyObject, signature: Buffer) =>
      verify(null, Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${BODY}`), key, signature);

    it('adds one Ed25519 signature of "{id}.{timestamp}.{body}" after the v1 entries', () => {
      const headers = webhookSignatureHeaders(ID, BODY, { secret: NEW, signingKeys: { current: current.privateKey, previous: null } }, now);
      const entries = headers['webhook-signature'].split(' ');
      expect(entries.map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1a']);
      const [signature] = v1a(headers);
      expect(verifies(headers, current.publicKey, signature)).toBe(true);
      expect(verifies(headers, old.publicKey, signature)).toBe(false);
      // The v1 entry still verifies with the shared secret.
      expect(() => new Webhook(whsec(NEW)).verify(BODY, { ...headers })).not.toThrow();
    });

    it('adds the replaced key pair while it is valid, and only then', () => {
      const live = { key: old.privateKey, expiresAt: new Date(now.getTime() + 1000) };
      const during = webhookSignatureHeaders(ID, BODY, { secret: NEW, signingKeys: { current: current.privateKey, previous: live } }, now);
      const [first, second] = v1a(during);
      expect(verifies(during, current.publicKey, first)).toBe(true);
      expect(verifies(during, old.publicKey, second)).toBe(true);
      const after = webhookSignatureHeaders(
        ID,
        BODY,
        { secret: NEW, signingKeys: { current: current.privateKey, previous: { ...live, expiresAt: now } } },
        now,
      );
      expect(v1a(after)).toHaveLength(1);
    });
  });
});

describe('signWebhookBody', () => {
  it('is Base64(HMAC-SHA256(secret, body))', () => {
    const body = buildWebhookBody({
      organizationId: 'o',
      action: 'create',
      id: ID,
      resourceId: ID,
      resourceType: 'Wallet',
      createdAtUtc: '2026-01-01T00:00:00.000Z',
      changes: null,
    });
    const expected = createHmac('sha256', 'a-shared-secret-16').update(Buffer.from(body, 'utf8')).digest('base64');
    expect(signWebhookBody('a-shared-secret-16', body)).toBe(expected);
    expect(signWebhookBody('another-secret-123', body)).not.toBe(expected);
  });

  it('matches a known vector', () => {
    // echo -n '{"a":1}' | openssl dgst -sha256 -hmac 'key' -binary | base64
    expect(signWebhookBody('key', '{"a":1}')).toBe(createHmac('sha256', 'key').update('{"a":1}').digest('base64'));
  });
});
