import { bearer, createOrganization, TestOrganization } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, WEBHOOKS_PATH } from './support/webhooks';

const SECRET = 'receiver-friendly-secret-0001';

interface Attempt {
  attempt: number;
  startedAtUtc: string;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

describe('Receiver-friendly delivery', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' });
    receiver = await new TestReceiver().start();
    org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  /** The delivery log's detail of the webhook about `resourceId`, once `done` holds for it. */
  async function detailOf(resourceId: string, done: (detail: { status: string; attempts: Attempt[] }) => boolean) {
    const list = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.some((w: { resourceId: string }) => w.resourceId === resourceId),
    );
    const id = list.body.webhooks.find((w: { resourceId: string }) => w.resourceId === resourceId).id;
    const detail = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)),
      (res) => res.status === 200 && done(res.body),
    );
    return detail.body as { status: string; attempts: Attempt[] };
  }

  describe('response bodies in the delivery log', () => {
    it('keeps the first 1,024 bytes of a longer answer', async () => {
      const body = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
      receiver.behaviour = () => ({ status: 200, body });
      const wallet = await createWallet(t, org, 'long answer');
      const detail = await detailOf(wallet, (d) => d.status === 'succeeded');
      expect(detail.attempts).toHaveLength(1);
      expect(detail.attempts[0].responseBody).toBe(body.slice(0, 1024));
    });

    it('shows invalid UTF-8 replaced, and keeps a failed attempt’s answer too', async () => {
      const body = Buffer.concat([Buffer.from('bad '), Buffer.from([0xff, 0xfe]), Buffer.from(' byte, é ok, nul '), Buffer.from([0])]);
      receiver.behaviour = (_, webhook) => (webhook.body.resourceType === 'Wallet' ? { status: 500, body } : { status: 200 });
      const wallet = await createWallet(t, org, 'invalid utf-8 answer');
      const detail = await detailOf(wallet, (d) => d.status === 'failed');
      expect(detail.attempts).toHaveLength(3);
      for (const attempt of detail.attempts) {
        expect(attempt.responseStatus).toBe(500);
        expect(attempt.responseBody).toBe('bad \uFFFD\uFFFD byte, é ok, nul \uFFFD');
      }
    });

    it('records an empty answer as an empty string and no answer as null', async () => {
      let n = 0;
      receiver.behaviour = () => ((n += 1) === 1 ? 'destroy' : { status: 204, body: '' });
      const wallet = await createWallet(t, org, 'empty answer');
      const detail = await detailOf(wallet, (d) => d.status === 'succeeded');
      expect(detail.attempts.map((a) => [a.responseStatus, a.responseBody])).toEqual([
        [null, null],
        [204, ''],
      ]);
    });
  });

  describe('Retry-After', () => {
    it('a 503 with Retry-After: 2 holds the next attempt back at least 2 s, though the schedule says 100 ms', async () => {
      let n = 0;
      receiver.behaviour = () => ((n += 1) === 1 ? { status: 503, headers: { 'retry-after': '2' }, body: 'busy' } : { status: 200 });
      const wallet = await createWallet(t, org, 'retry after');
      const detail = await detailOf(wallet, (d) => d.status === 'succeeded');
      expect(detail.attempts.map((a) => a.responseStatus)).toEqual([503, 200]);
      const [first, second] = detail.attempts.map((a) => Date.parse(a.startedAtUtc));
      expect(second - first).toBeGreaterThanOrEqual(2000);
      const receipts = receiver.received.filter((w) => w.body.resourceId === wallet).map((w) => w.receivedAt);
      expect(receipts).toHaveLength(2);
      expect(receipts[1] - receipts[0]).toBeGreaterThanOrEqual(2000);
    });
  });
});
