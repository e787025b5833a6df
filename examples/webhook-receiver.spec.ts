import { createHmac } from 'node:crypto';
import { signWebhookBody } from '../src/modules/webhooks/webhook.rules';
import { startReceiver, verifySignature } from './webhook-receiver';

describe('example webhook receiver', () => {
  const secret = 'example-shared-secret-1';
  const body = Buffer.from('{"organizationId":"o","action":"create","id":"w1","resourceId":"r","resourceType":"Wallet","createdAtUtc":"2026-11-22T01:25:42.123456+00:00","changes":null}');

  it('accepts the signature the service makes and refuses anything else', () => {
    expect(verifySignature(body, signWebhookBody(secret, body), secret)).toBe(true);
    expect(verifySignature(body, signWebhookBody('other-secret-value', body), secret)).toBe(false);
    expect(verifySignature(Buffer.concat([body, Buffer.from(' ')]), signWebhookBody(secret, body), secret)).toBe(false);
    expect(verifySignature(body, undefined, secret)).toBe(false);
    expect(verifySignature(body, 'short', secret)).toBe(false);
  });

  it('answers 200, hands each id over once, and 401 for a bad signature', async () => {
    const seen: string[] = [];
    const { server, url } = await startReceiver({ sharedSecret: secret, onWebhook: (w) => seen.push(w.id) });
    try {
      const signature = createHmac('sha256', secret).update(body).digest('base64');
      const post = (hmac: string) =>
        fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-webhook-hmac': hmac } });
      expect((await post(signature)).status).toBe(200);
      expect((await post(signature)).status).toBe(200);
      expect((await post('AAAA')).status).toBe(401);
      await new Promise((r) => setImmediate(r));
      expect(seen).toEqual(['w1']);
    } finally {
      server.close();
    }
  });
});
