import { createHmac } from 'node:crypto';
import { WebhookVerificationError } from 'standardwebhooks';
import { verifiedWebhook } from './typed-client';

/** Signed as the service signs (README, "Verifying a webhook"), independently of the library. */
function sign(id: string, timestamp: number, body: string, secret: string): Record<string, string> {
  const signature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
}

describe('verifiedWebhook (the typed client example)', () => {
  const secret = 'example-shared-secret-0123456789';
  const body = JSON.stringify({
    organizationId: '01a20000-0000-7000-8000-000000000001',
    action: 'create',
    id: '01a20000-0000-7000-8000-000000000002',
    resourceId: '01a20000-0000-7000-8000-000000000003',
    resourceType: 'Token',
    createdAtUtc: '2026-11-26T00:00:00.000000+00:00',
    changes: null,
  });
  const now = Math.floor(Date.now() / 1000);

  it('returns the typed body of a webhook signed with the shared secret', () => {
    const webhook = verifiedWebhook('nft', body, sign('01a20000-0000-7000-8000-000000000002', now, body, secret), secret);
    expect(webhook.resourceType).toBe('Token');
    expect(webhook.id).toBe('01a20000-0000-7000-8000-000000000002');
  });

  it('refuses another secret, a changed body and a stale timestamp', () => {
    const headers = sign('w1', now, body, secret);
    expect(() => verifiedWebhook('nft', body, headers, 'another-secret-0123456789')).toThrow(WebhookVerificationError);
    expect(() => verifiedWebhook('nft', body.replace('create', 'delete'), headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifiedWebhook('nft', body, sign('w1', now - 600, body, secret), secret)).toThrow(WebhookVerificationError);
  });
});
