import { createHmac } from 'node:crypto';
import { signWebhookBody, webhookSignatureHeaders } from '../src/modules/webhooks/engine/webhook-signature';
import { startReceiver, verifySignature, verifyWebhook } from './webhook-receiver';

describe('example webhook receiver', () => {
  const secret = 'example-shared-secret-1';
  const body = Buffer.from(
    '{"organizationId":"o","action":"create","id":"w1","resourceId":"r","resourceType":"Wallet","createdAtUtc":"2026-11-22T01:25:42.123456+00:00","changes":null}',
  );

  it('computes the legacy signature the service makes, and refuses anything else', () => {
    expect(verifySignature(body, signWebhookBody(secret, body), secret)).toBe(true);
    expect(verifySignature(body, signWebhookBody('other-secret-value', body), secret)).toBe(false);
    expect(verifySignature(Buffer.concat([body, Buffer.from(' ')]), signWebhookBody(secret, body), secret)).toBe(false);
    expect(verifySignature(body, undefined, secret)).toBe(false);
    expect(verifySignature(body, 'short', secret)).toBe(false);
  });

  it('answers 200, hands each id over once, and 401 for a bad signature or the legacy header alone', async () => {
    const seen: string[] = [];
    const { server, url } = await startReceiver({ sharedSecret: secret, onWebhook: (w) => seen.push(w.id) });
    try {
      const post = (headers: Record<string, string>) =>
        fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
      const signed = { ...webhookSignatureHeaders('w1', body, { secret }, new Date()) } as Record<string, string>;
      expect((await post(signed)).status).toBe(200);
      expect((await post(signed)).status).toBe(200);
      expect((await post({ ...signed, 'webhook-signature': 'v1,AAAA' })).status).toBe(401);
      // A valid legacy signature alone is refused: it signs no time, so it could be a replay.
      expect((await post({ 'x-service-webhook-hmac': createHmac('sha256', secret).update(body).digest('base64') })).status).toBe(401);
      await new Promise((r) => setImmediate(r));
      expect(seen).toEqual(['w1']);
    } finally {
      server.close();
    }
  });

  describe('verifyWebhook', () => {
    const NEW = 'example-new-secret-22';
    const now = Date.parse('2026-11-23T10:00:00.000Z');
    const signed = (at: number, secrets: Parameters<typeof webhookSignatureHeaders>[2] = { secret }) =>
      ({ ...webhookSignatureHeaders('w1', body, secrets, new Date(at)) }) as Record<string, string>;

    it('accepts Standard Webhooks signatures and decides by them alone when present', () => {
      const headers = signed(now);
      expect(verifyWebhook(body, headers, [secret], now)).toEqual({ ok: true, scheme: 'standard-webhooks' });
      expect(verifyWebhook(body, headers, [NEW], now).ok).toBe(false);
      expect(verifyWebhook(Buffer.concat([body, Buffer.from(' ')]), headers, [secret], now).ok).toBe(false);
      // A valid legacy header does not rescue a bad webhook-signature.
      expect(verifyWebhook(body, { ...headers, 'webhook-signature': 'v1,AAAA' }, [secret], now).ok).toBe(false);
      expect(verifyWebhook(body, { ...headers, 'webhook-id': 'w2' }, [secret], now).ok).toBe(false);
      expect(verifyWebhook(body, { ...headers, 'webhook-id': undefined }, [secret], now).ok).toBe(false);
      expect(verifyWebhook(body, { ...headers, 'webhook-timestamp': 'soon' }, [secret], now).ok).toBe(false);
    });

    it('refuses a webhook-timestamp older (or newer) than 5 minutes', () => {
      expect(verifyWebhook(body, signed(now - 299_000), [secret], now).ok).toBe(true);
      expect(verifyWebhook(body, signed(now - 301_000), [secret], now)).toEqual({ ok: false, reason: expect.stringMatching(/5 minutes/) });
      expect(verifyWebhook(body, signed(now + 301_000), [secret], now).ok).toBe(false);
    });

    it('requires webhook-signature: the legacy header alone, current or previous, is a legacy check that cannot stop replays', () => {
      const seedOnly = { 'x-service-webhook-hmac': signWebhookBody(secret, body) };
      expect(verifyWebhook(body, seedOnly, [secret], now)).toEqual({
        ok: false,
        reason: expect.stringMatching(/webhook-signature missing/),
      });
      const rotating = {
        'x-service-webhook-hmac': signWebhookBody(NEW, body),
        'x-service-webhook-hmac-previous': signWebhookBody(secret, body),
      };
      expect(verifyWebhook(body, rotating, [secret, NEW], now).ok).toBe(false);
      expect(verifyWebhook(body, {}, [secret], now).ok).toBe(false);
    });

    it('accepts either secret during a rotation, and only the new one after it', () => {
      const during = signed(now, { secret: NEW, previous: { secret, expiresAt: new Date(now + 60_000) } });
      expect(verifyWebhook(body, during, [secret], now).ok).toBe(true);
      expect(verifyWebhook(body, during, [NEW], now).ok).toBe(true);
      expect(verifyWebhook(body, during, [NEW, secret], now).ok).toBe(true);
      const after = signed(now, { secret: NEW, previous: { secret, expiresAt: new Date(now) } });
      expect(verifyWebhook(body, after, [secret], now).ok).toBe(false);
      expect(verifyWebhook(body, after, [secret, NEW], now).ok).toBe(true);
    });

    it('the receiver takes both secrets during a rotation', async () => {
      const { server, url } = await startReceiver({ sharedSecret: [NEW, secret] });
      try {
        const post = (headers: Record<string, string>) =>
          fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
        expect((await post(signed(Date.now(), { secret: NEW }))).status).toBe(200);
        expect((await post(signed(Date.now(), { secret }))).status).toBe(200);
        expect((await post(signed(Date.now(), { secret: 'a-third-secret-value' }))).status).toBe(401);
        expect((await post(signed(Date.now() - 600_000, { secret: NEW }))).status).toBe(401);
      } finally {
        server.close();
      }
    });
  });
});
