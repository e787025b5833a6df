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

  describe('custom headers', () => {
    const ENDPOINTS = '/api/organization/v1/current-organization/webhook-endpoints';
    const endpoint = (id: string) => t.http().get(`${ENDPOINTS}/${id}`).set(bearer(org.adminKey));

    it('are set by POST and PATCH, shown by GET and sent on every webhook to that endpoint only', async () => {
      receiver.behaviour = () => ({ status: 200 });
      const created = await t
        .http()
        .post(ENDPOINTS)
        .set(bearer(org.adminKey))
        .send({
          url: receiver.urlFor('/with-headers'),
          webhookTypes: ['custodialAccount'],
          sharedSecret: SECRET,
          headers: { 'X-Gateway-Token': 'gw 4f1c9a ~!', 'x-tenant': 'acme' },
        })
        .expect(201);
      expect(created.body.headers).toEqual({ 'X-Gateway-Token': 'gw 4f1c9a ~!', 'x-tenant': 'acme' });
      expect((await endpoint(created.body.id).expect(200)).body.headers).toEqual({ 'X-Gateway-Token': 'gw 4f1c9a ~!', 'x-tenant': 'acme' });

      const first = await createWallet(t, org, 'with headers');
      await receiver.waitFor((r) => r.filter((w) => w.body.resourceId === first).length === 2);
      const [toEndpoint] = receiver.received.filter((w) => w.body.resourceId === first && w.path === '/with-headers');
      expect(toEndpoint.headers).toMatchObject({ 'x-gateway-token': 'gw 4f1c9a ~!', 'x-tenant': 'acme' });
      // The service's own headers are all still there.
      expect(toEndpoint.headers['x-service-webhook-hmac']).toEqual(expect.any(String));
      expect(toEndpoint.headers['webhook-signature']).toEqual(expect.any(String));
      const [toDefault] = receiver.received.filter((w) => w.body.resourceId === first && w.path === '/webhooks');
      expect(toDefault.headers['x-gateway-token']).toBeUndefined();

      const patched = await t
        .http()
        .patch(`${ENDPOINTS}/${created.body.id}`)
        .set(bearer(org.adminKey))
        .send({ headers: { 'X-Other': 'two' } })
        .expect(200);
      expect(patched.body.headers).toEqual({ 'X-Other': 'two' });
      const second = await createWallet(t, org, 'patched headers');
      await receiver.waitFor((r) => r.some((w) => w.body.resourceId === second && w.path === '/with-headers'));
      const sent = receiver.received.find((w) => w.body.resourceId === second && w.path === '/with-headers')!;
      expect(sent.headers['x-other']).toBe('two');
      expect(sent.headers['x-tenant']).toBeUndefined();

      await t.http().patch(`${ENDPOINTS}/${created.body.id}`).set(bearer(org.adminKey)).send({ headers: null }).expect(200);
      expect((await endpoint(created.body.id).expect(200)).body.headers).toEqual({});
      await t.http().delete(`${ENDPOINTS}/${created.body.id}`).set(bearer(org.adminKey)).expect(204);
    });

    it('reach the default endpoint too, through its id', async () => {
      await t
        .http()
        .patch(`${ENDPOINTS}/${org.id}`)
        .set(bearer(org.adminKey))
        .send({ headers: { 'X-Default': 'yes' } })
        .expect(200);
      expect((await endpoint(org.id).expect(200)).body.headers).toEqual({ 'X-Default': 'yes' });
      const wallet = await createWallet(t, org, 'default headers');
      await receiver.waitFor((r) => r.some((w) => w.body.resourceId === wallet));
      expect(receiver.received.find((w) => w.body.resourceId === wallet)!.headers['x-default']).toBe('yes');
      await t.http().patch(`${ENDPOINTS}/${org.id}`).set(bearer(org.adminKey)).send({ headers: {} }).expect(200);
    });

    it.each([
      ['x-service-webhook-hmac', 'v'],
      ['Webhook-Signature', 'v'],
      ['webhook-id', 'v'],
      ['webhook-timestamp', 'v'],
      ['x-service-webhook-id', 'v'],
      ['Content-Type', 'text/plain'],
      ['host', 'example.com'],
      ['User-Agent', 'me'],
      ['x bad name', 'v'],
      ['x-crlf', 'a\r\nx-injected: 1'],
      ['x-long', 'x'.repeat(1025)],
    ])('refuses %s with a 400 naming it, changing nothing', async (name, value) => {
      const before = (await endpoint(org.id).expect(200)).body;
      const res = await t
        .http()
        .patch(`${ENDPOINTS}/${org.id}`)
        .set(bearer(org.adminKey))
        .send({ headers: { 'X-Fine': 'ok', [name]: value } })
        .expect(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: `headers.${name}` })]);
      expect(res.body.detail).toContain(`headers.${name}`);
      expect((await endpoint(org.id).expect(200)).body).toEqual(before);
    });

    it('refuses Authorization and Proxy-Authorization in any case, on POST and PATCH: authentication goes through auth', async () => {
      for (const name of ['Authorization', 'proxy-AUTHORIZATION', 'authorization', 'Proxy-Authorization']) {
        const headers = { 'X-Fine': 'ok', [name]: 'Bearer gateway-credential' };
        const created = await t
          .http()
          .post(ENDPOINTS)
          .set(bearer(org.adminKey))
          .send({ url: receiver.urlFor('/authorization'), webhookTypes: [], headers })
          .expect(400);
        expect(created.body.errors).toEqual([expect.objectContaining({ field: `headers.${name}` })]);
        const before = (await endpoint(org.id).expect(200)).body;
        const patched = await t.http().patch(`${ENDPOINTS}/${org.id}`).set(bearer(org.adminKey)).send({ headers }).expect(400);
        expect(patched.body.errors).toEqual([expect.objectContaining({ field: `headers.${name}` })]);
        expect(patched.body.detail).toContain(`headers.${name}`);
        expect((await endpoint(org.id).expect(200)).body).toEqual(before);
      }
      const list = await t.http().get(ENDPOINTS).set(bearer(org.adminKey)).expect(200);
      expect(list.body.endpoints.map((e: { url: string }) => e.url)).not.toContain(receiver.urlFor('/authorization'));
    });

    it('refuses more than 10 headers, and headers that are not an object', async () => {
      const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-h${i}`, 'v']));
      for (const headers of [eleven, ['x-a', 'v'], 'x-a: v', { 'x-a': 1 }]) {
        const res = await t
          .http()
          .post(ENDPOINTS)
          .set(bearer(org.adminKey))
          .send({ url: receiver.urlFor('/refused'), webhookTypes: [], headers })
          .expect(400);
        expect(res.body.errors[0].field).toMatch(/^headers/);
      }
      const list = await t.http().get(ENDPOINTS).set(bearer(org.adminKey)).expect(200);
      expect(list.body.endpoints.map((e: { url: string }) => e.url)).not.toContain(receiver.urlFor('/refused'));
    });
  });

  describe('rate limit settings', () => {
    const ENDPOINTS = '/api/organization/v1/current-organization/webhook-endpoints';

    it('default to unlimited (null), take 1 to 10,000 by POST and PATCH, and null clears them', async () => {
      const created = await t
        .http()
        .post(ENDPOINTS)
        .set(bearer(org.adminKey))
        .send({ url: receiver.urlFor('/rated'), webhookTypes: [], sharedSecret: SECRET })
        .expect(201);
      expect(created.body.rateLimitPerSecond).toBeNull();
      for (const value of [1, 10_000, 20]) {
        const res = await t
          .http()
          .patch(`${ENDPOINTS}/${created.body.id}`)
          .set(bearer(org.adminKey))
          .send({ rateLimitPerSecond: value })
          .expect(200);
        expect(res.body.rateLimitPerSecond).toBe(value);
      }
      expect((await t.http().get(`${ENDPOINTS}/${created.body.id}`).set(bearer(org.adminKey)).expect(200)).body.rateLimitPerSecond).toBe(
        20,
      );
      await t.http().patch(`${ENDPOINTS}/${created.body.id}`).set(bearer(org.adminKey)).send({ rateLimitPerSecond: null }).expect(200);
      expect(
        (await t.http().get(`${ENDPOINTS}/${created.body.id}`).set(bearer(org.adminKey)).expect(200)).body.rateLimitPerSecond,
      ).toBeNull();
      // The default endpoint takes it too.
      const patched = await t.http().patch(`${ENDPOINTS}/${org.id}`).set(bearer(org.adminKey)).send({ rateLimitPerSecond: 5 }).expect(200);
      expect(patched.body.rateLimitPerSecond).toBe(5);
      await t.http().patch(`${ENDPOINTS}/${org.id}`).set(bearer(org.adminKey)).send({ rateLimitPerSecond: null }).expect(200);
      await t.http().delete(`${ENDPOINTS}/${created.body.id}`).set(bearer(org.adminKey)).expect(204);
    });

    it.each([['20'], [1.5], [0], [-1], [10_001], [true], [{}]])(
      'refuses %p with a 400 naming rateLimitPerSecond, changing nothing',
      async (value) => {
        const before = (await t.http().get(`${ENDPOINTS}/${org.id}`).set(bearer(org.adminKey)).expect(200)).body;
        const res = await t
          .http()
          .patch(`${ENDPOINTS}/${org.id}`)
          .set(bearer(org.adminKey))
          .send({ rateLimitPerSecond: value })
          .expect(400);
        expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'rateLimitPerSecond' })]));
        expect((await t.http().get(`${ENDPOINTS}/${org.id}`).set(bearer(org.adminKey)).expect(200)).body).toEqual(before);
        await t
          .http()
          .post(ENDPOINTS)
          .set(bearer(org.adminKey))
          .send({ url: receiver.urlFor('/refused-rate'), webhookTypes: [], rateLimitPerSecond: value })
          .expect(400);
      },
    );
  });
});
