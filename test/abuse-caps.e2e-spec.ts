import { bearer, createApiKey, createOrganization, expectProblem } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet, WEBHOOKS_PATH } from './support/webhooks';

const OWN_KEYS = '/api/organization/v1/current-organization/api-keys';

describe('API keys per organization (API_KEYS_PER_ORGANIZATION)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ API_KEYS_PER_ORGANIZATION: '4' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('stops at the cap exactly, even for concurrent requests, on the operator and the org-admin paths', async () => {
    const org = await createOrganization(t); // holds one admin key
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t
          .http()
          .post(`/admin/v1/organizations/${org.id}/api-keys`)
          .set(bearer(OPERATOR_KEY))
          .send({ name: `k${i}`, roles: ['read'] }),
      ),
    );
    expect(attempts.filter((r) => r.status === 201)).toHaveLength(3);
    for (const refused of attempts.filter((r) => r.status !== 201)) expectProblem(refused, 422, 'API_KEY_LIMIT_REACHED');

    const byAdmin = await t
      .http()
      .post(OWN_KEYS)
      .set(bearer(org.adminKey))
      .send({ name: 'one more', roles: ['read'] });
    expectProblem(byAdmin, 422, 'API_KEY_LIMIT_REACHED');
    const listed = await t.http().get(OWN_KEYS).set(bearer(org.adminKey)).expect(200);
    expect(listed.body.apiKeys).toHaveLength(4);

    // Revoked keys do not count.
    const spare = attempts.find((r) => r.status === 201)!.body.id;
    await t.http().delete(`${OWN_KEYS}/${spare}`).set(bearer(org.adminKey)).expect(204);
    await t
      .http()
      .post(OWN_KEYS)
      .set(bearer(org.adminKey))
      .send({ name: 'replacement', roles: ['read'] })
      .expect(201);

    // The cap is per organization: another one is not held back.
    const other = await createOrganization(t);
    await createApiKey(t, other.id, ['read']);
  });
});

describe('on-demand webhook sends per organization (WEBHOOK_SENDS_PER_ORGANIZATION)', () => {
  let a: TestApp;
  let b: TestApp;
  let receiver: TestReceiver;
  beforeAll(async () => {
    // Two instances sharing Redis counts: the limit holds across them.
    const env = { QUEUE_PREFIX: `tsl${process.env.TEST_RUN_ID}`, WEBHOOK_SENDS_PER_ORGANIZATION: '3', WEBHOOK_SENDS_WINDOW: '1m' };
    a = await createTestApp(env);
    b = await createTestApp(env);
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await a.close();
    await b.close();
  });

  it('shares one count among test sends and redeliveries, every key and every instance, then answers 429 with Retry-After', async () => {
    const org = await createOrganization(a);
    const secondAdmin = (await createApiKey(a, org.id, ['admin'])).key;
    await configureWebhooks(a, org, { url: receiver.url, sharedSecret: 'send-limit-secret-0123456789' });
    await createWallet(a, org);
    const log = await waitUntil(
      () => a.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) => res.status === 200 && res.body.webhooks.length > 0,
    );
    const webhookId = log.body.webhooks[0].id;

    await a.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    await b.http().post(`${WEBHOOKS_PATH}/${webhookId}/redeliver`).set(bearer(secondAdmin)).expect(202);
    await b.http().post(`${CONFIG_PATH}/test`).set(bearer(secondAdmin)).send({}).expect(202);

    const refused = await a.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({});
    expectProblem(refused, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expectProblem(await b.http().post(`${WEBHOOKS_PATH}/${webhookId}/redeliver`).set(bearer(secondAdmin)), 429, 'RATE_LIMITED');

    // Other routes of the organization, and other organizations, are unaffected.
    await a.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)).expect(200);
    const other = await createOrganization(a);
    await configureWebhooks(a, other, { url: receiver.url, sharedSecret: 'send-limit-secret-0123456789' });
    await b.http().post(`${CONFIG_PATH}/test`).set(bearer(other.adminKey)).send({}).expect(202);
  });
});
