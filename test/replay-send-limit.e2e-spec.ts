import { bearer, createOrganization, expectProblem } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet, WEBHOOKS_PATH } from './support/webhooks';

/** A replay costs the organization's send limit one send per webhook it queues, not one request. */
describe('replays and the per-organization send limit', () => {
  let t: TestApp;
  const receiver = new TestReceiver();

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp({ WEBHOOK_SENDS_PER_ORGANIZATION: '5', WEBHOOK_SENDS_WINDOW: '10m', WEBHOOK_RETRY_SCHEDULE: '100ms' });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('charges the webhooks a replay queues, refuses one that does not fit whole, and that refusal queues nothing', async () => {
    receiver.behaviour = () => ({ status: 500 });
    const org = await createOrganization(t);
    const since = new Date(Date.now() - 60_000).toISOString();
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: 'replay-limit-secret-0001' });
    for (const name of ['a', 'b', 'c']) await createWallet(t, org, name);
    const failed = () =>
      waitUntil(
        async () => (await t.http().get(`${WEBHOOKS_PATH}?status=failed`).set(bearer(org.adminKey)).expect(200)).body.webhooks as unknown[],
        (rows) => rows.length === 3,
      );
    await failed();

    // Three webhooks: three of the five sends.
    const replay = () => t.http().post(`${WEBHOOKS_PATH}/replay`).set(bearer(org.adminKey)).send({ since });
    expect((await replay().expect(202)).body).toEqual({ count: 3 });
    await failed();
    const sentBefore = receiver.received.length;

    // Two are left: a replay of three does not fit, and queues nothing.
    const refused = await replay();
    expectProblem(refused, 429, 'RATE_LIMITED');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(
      ((await t.http().get(`${WEBHOOKS_PATH}?status=pending`).set(bearer(org.adminKey)).expect(200)).body.webhooks as unknown[]).length,
    ).toBe(0);
    expect(receiver.received.length).toBe(sentBefore);

    // The refused replay's own request counted one send: one is left, for one test send.
    await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    expectProblem(await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}), 429, 'RATE_LIMITED');
  });
});
