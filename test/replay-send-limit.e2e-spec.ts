import { bearer, createOrganization, expectProblem } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet, deliveryLog, WEBHOOKS_PATH } from './support/webhooks';

const FAILED = 60;
const BUDGET = 100;

/**
 * Replays are the recovery path after a receiver's outage: they have a budget of their own per
 * organization, counted in the webhooks they queue (WEBHOOK_REPLAYS_PER_HOUR), and are never
 * refused by the small limit on test sends and redeliveries (10 per minute by default).
 */
describe('replays, their budget and the send limit of test sends', () => {
  let t: TestApp;
  const receiver = new TestReceiver();

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp({
      WEBHOOK_REPLAYS_PER_HOUR: String(BUDGET),
      // The default 10 test sends, in a window that outlasts the test.
      WEBHOOK_SENDS_WINDOW: '10m',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
    });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it(`replays ${FAILED} failed webhooks while test sends are used up, and refuses a replay past the budget, queueing nothing`, async () => {
    let down = true;
    receiver.behaviour = () => ({ status: down ? 500 : 200 });
    const org = await createOrganization(t);
    const since = new Date(Date.now() - 60_000).toISOString();
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: 'replay-budget-secret-0001' });
    for (let i = 0; i < FAILED; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => createWallet(t, org, `w${i + j}`)));
    }
    const failed = () =>
      waitUntil(
        async () => (await deliveryLog(t, org)).filter((w) => w.status === 'failed'),
        (rows) => rows.length === FAILED,
        60_000,
      );
    const failedIds = (await failed()).map((w) => w.id);

    // The receiver is back. The organization's 10 test sends of the window are used up: an 11th is refused.
    down = false;
    const testSend = () => t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({});
    for (let i = 0; i < 10; i += 1) await testSend().expect(202);
    expectProblem(await testSend(), 429, 'RATE_LIMITED');

    // The replay of every failed webhook is accepted all the same, and each one arrives.
    expect((await t.http().post(`${WEBHOOKS_PATH}/replay`).set(bearer(org.adminKey)).send({ since }).expect(202)).body).toEqual({
      count: FAILED,
    });
    await waitUntil(
      async () => new Set((await deliveryLog(t, org)).filter((w) => w.status === 'succeeded').map((w) => w.id)),
      (succeeded) => failedIds.every((id) => succeeded.has(id)),
      60_000,
    );
    for (const id of failedIds) expect(receiver.byId(id).length).toBeGreaterThanOrEqual(2);
    // Test sends are still limited.
    expectProblem(await testSend(), 429, 'RATE_LIMITED');

    // The budget had 100 and 60 are spent: a replay of the 70 webhooks (test sends included) does not fit, and queues nothing.
    receiver.behaviour = () => ({ status: 500 });
    const sentBefore = receiver.received.length;
    const refused = await t.http().post(`${WEBHOOKS_PATH}/replay`).set(bearer(org.adminKey)).send({ since, status: 'all' });
    expectProblem(refused, 429, 'RATE_LIMITED');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect(refused.body.detail).toContain('replay');
    expect((await deliveryLog(t, org)).filter((w) => w.status === 'pending')).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.length).toBe(sentBefore);
  });
});
