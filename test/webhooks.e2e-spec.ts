import { MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { DeliveryMaintenanceRepository } from '../src/modules/webhooks/delivery-maintenance.repository';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { sql } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { WebhookReconciler } from '../src/modules/webhooks/maintenance/webhook-reconciler.service';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';

const SECRET = 'receiver-shared-secret-0001';

describe('webhook delivery', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    // Far-apart delays keep "increasing intervals" visible even on a loaded machine.
    t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '100ms,1s,1500ms' });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  const deliveryLog = (org: TestOrganization, query = '') => t.http().get(`${WEBHOOKS_PATH}${query}`).set(bearer(org.adminKey)).expect(200);

  it('sends a signed webhook with the exact body, key order and headers of the contract', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    const walletId = await createWallet(t, org);

    const [webhook] = await receiver.waitFor((r) => r.length >= 1);
    expect(signatureIsValid(webhook, SECRET)).toBe(true);
    expect(signatureIsValid(webhook, 'some-other-secret-000')).toBe(false);
    expect(webhook.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(JSON.parse(webhook.raw.toString('utf8')))).toEqual([
      'organizationId',
      'action',
      'id',
      'resourceId',
      'resourceType',
      'createdAtUtc',
      'changes',
    ]);
    expect(webhook.body).toEqual({
      organizationId: org.id,
      action: 'create',
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      resourceId: walletId,
      resourceType: 'Wallet',
      createdAtUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
      changes: null,
    });
    expect(webhook.headers['x-service-webhook-id']).toBe(webhook.body.id);
    expect(webhook.headers['x-service-webhook-event-id']).toBe(webhook.body.id);
    expect(webhook.headers['x-service-webhook-attempt']).toBe('1');
    expect(webhook.headers['user-agent']).toMatch(/nft-wallet-webhooks/);

    // The resource named by the webhook can be fetched with the same key (README.md "The API in brief").
    await t
      .http()
      .get(`/v1/wallets/${String(webhook.body.resourceId)}`)
      .set(bearer(org.adminKey))
      .expect(200);

    const log = await waitUntil(
      () => deliveryLog(org),
      (res) => res.body.webhooks[0]?.status === 'succeeded',
    );
    expect(log.body.webhooks[0]).toEqual({
      id: webhook.body.id,
      // The default endpoint (`/webhook-config`) has the organization's id; its webhook
      // of an event has the event's id.
      endpointId: org.id,
      eventId: webhook.body.id,
      webhookType: 'custodialAccount',
      resourceType: 'Wallet',
      resourceId: walletId,
      action: 'create',
      status: 'succeeded',
      attemptCount: 1,
      createdAtUtc: expect.stringMatching(/\+00:00$/),
      lastAttemptAtUtc: expect.stringMatching(/\+00:00$/),
      nextAttemptAtUtc: null,
      lastResponseStatus: 200,
      sequence: null,
    });
    const detail = await t
      .http()
      .get(`${WEBHOOKS_PATH}/${String(webhook.body.id)}`)
      .set(bearer(org.adminKey))
      .expect(200);
    expect(detail.body.payload).toEqual(webhook.body);
    expect(detail.body.attempts).toEqual([
      {
        attempt: 1,
        startedAtUtc: expect.stringMatching(/\+00:00$/),
        durationMs: expect.any(Number),
        responseStatus: 200,
        error: null,
        responseBody: 'ok',
        // The endpoint's in-flight limit when the attempt started: where every endpoint starts.
        inFlightLimit: 10,
      },
    ]);
  });

  it('sends only the subscribed types', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, webhookTypes: ['nft'] });
    await createWallet(t, org, 'not subscribed');
    const token = await t
      .http()
      .post('/v1/tokens')
      .set(bearer(org.adminKey))
      .send({ contractAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', blockchainTokenId: '1' })
      .expect(201);
    await receiver.waitFor((r) => r.some((w) => w.body.resourceId === token.body.id));
    // Let a straggler show itself if the filter were broken: a second subscribed event is a barrier.
    await t
      .http()
      .patch(`/v1/tokens/${token.body.id}`)
      .set(bearer(org.adminKey))
      .send({ metadata: { name: 'Renamed' } })
      .expect(200);
    await receiver.waitFor((r) => r.some((w) => w.body.action === 'update'));
    expect(receiver.received.map((w) => w.body.resourceType)).toEqual(['Token', 'Token']);
    expect(receiver.received[1].body.changes).toEqual({ name: 'Renamed' });
    const log = await deliveryLog(org);
    expect(log.body.webhooks.map((w: { webhookType: string }) => w.webhookType)).toEqual(['nft', 'nft']);
  });

  it('sends nothing while the configuration is disabled, and resumes once enabled', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, enabled: false });
    const ignored = await createWallet(t, org, 'while disabled');
    // The configuration is judged when the worker processes the event: wait for that moment,
    // otherwise enabling could come first and the event would rightly be sent.
    await waitUntil(
      () => t.app.get(MikroORM).em.getConnection().execute(`select processed_at from domain_event where resource_id = ?`, [ignored]),
      (rows) => rows.length === 1 && rows[0].processed_at !== null,
    );
    await t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ enabled: true }).expect(200);
    const sent = await createWallet(t, org, 'after enabling');
    await receiver.waitFor((r) => r.some((w) => w.body.resourceId === sent));
    expect(receiver.received.some((w) => w.body.resourceId === ignored)).toBe(false);
    expect((await deliveryLog(org)).body.webhooks).toHaveLength(1);
  });

  it('sends each organization only its own webhooks', async () => {
    const other = await new TestReceiver().start();
    try {
      const a = await createOrganization(t);
      const b = await createOrganization(t);
      await configureWebhooks(t, a, { url: receiver.url, sharedSecret: SECRET });
      await configureWebhooks(t, b, { url: other.url, sharedSecret: 'second-org-secret-0001' });
      const walletA = await createWallet(t, a);
      const walletB = await createWallet(t, b);
      await receiver.waitFor((r) => r.length >= 1);
      await other.waitFor((r) => r.length >= 1);
      expect(receiver.received.map((w) => w.body.resourceId)).toEqual([walletA]);
      expect(other.received.map((w) => w.body.resourceId)).toEqual([walletB]);
      expect(other.received[0].body.organizationId).toBe(b.id);
      expect(signatureIsValid(other.received[0], 'second-org-secret-0001')).toBe(true);
      expect((await deliveryLog(a)).body.webhooks.map((w: { resourceId: string }) => w.resourceId)).toEqual([walletA]);
    } finally {
      await other.stop();
    }
  });

  it('retries 500, 500, 200 with the same id at increasing intervals', async () => {
    receiver.behaviour = (n) => ({ status: n <= 2 ? 500 : 200 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const received = await receiver.waitFor((r) => r.length >= 3);
    expect(new Set(received.map((w) => w.body.id)).size).toBe(1);
    expect(received.map((w) => w.headers['x-service-webhook-attempt'])).toEqual(['1', '2', '3']);
    expect(received.map((w) => w.raw.toString())).toEqual(Array(3).fill(received[0].raw.toString()));
    const gap1 = received[1].receivedAt - received[0].receivedAt;
    const gap2 = received[2].receivedAt - received[1].receivedAt;
    // Schedule 100ms, 1s with ±20% jitter: at least 80 ms, then at least 800 ms.
    expect(gap1).toBeGreaterThanOrEqual(75);
    expect(gap2).toBeGreaterThanOrEqual(795);
    expect(gap2).toBeGreaterThan(gap1);
    const id = received[0].body.id as string;
    const detail = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)),
      (res) => res.body.status === 'succeeded',
    );
    expect(detail.body.attemptCount).toBe(3);
    expect(detail.body.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 500, 200]);
  });

  it('treats an answer slower than the time limit as a failure and retries', async () => {
    receiver.behaviour = (n) => ({ status: 200, delayMs: n === 1 ? 1600 : 0 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const received = await receiver.waitFor((r) => r.length >= 2);
    expect(received[1].body.id).toBe(received[0].body.id);
    const detail = await waitUntil(
      () =>
        t
          .http()
          .get(`${WEBHOOKS_PATH}/${String(received[0].body.id)}`)
          .set(bearer(org.adminKey)),
      (res) => res.body.status === 'succeeded',
    );
    expect(detail.body.attempts[0]).toEqual(
      expect.objectContaining({ responseStatus: null, error: expect.stringMatching(/no answer within 1000 ms/) }),
    );
    expect(detail.body.attempts[1].responseStatus).toBe(200);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    receiver.behaviour = (n) => ({ status: n === 1 ? 302 : 200 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const received = await receiver.waitFor((r) => r.length >= 2);
    expect(received.map((w) => w.headers['x-service-webhook-attempt'])).toEqual(['1', '2']);
  });

  it('ends failed after the whole schedule, then redelivers the same id and body on request', async () => {
    receiver.behaviour = () => ({ status: 503 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const failed = await waitUntil(
      () => deliveryLog(org, '?status=failed'),
      (res) => res.body.webhooks.length === 1,
    );
    const webhook = failed.body.webhooks[0];
    expect(webhook).toEqual(
      expect.objectContaining({ status: 'failed', attemptCount: 4, nextAttemptAtUtc: null, lastResponseStatus: 503 }),
    );
    expect(receiver.received).toHaveLength(4); // 1 + the 3 retries of the test schedule

    // The integrator fixes its endpoint and rotates the secret, then asks for a redelivery.
    receiver.behaviour = () => ({ status: 200 });
    const rotated = 'rotated-shared-secret-0002';
    await t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ sharedSecret: rotated }).expect(200);
    const accepted = await t.http().post(`${WEBHOOKS_PATH}/${webhook.id}/redeliver`).set(bearer(org.adminKey)).expect(202);
    expect(accepted.body).toEqual({ id: webhook.id });
    const received = await receiver.waitFor((r) => r.length >= 5);
    expect(received[4].body.id).toBe(webhook.id);
    expect(received[4].raw.equals(received[0].raw)).toBe(true);
    expect(signatureIsValid(received[4], rotated)).toBe(true);
    expect(received[4].headers['x-service-webhook-attempt']).toBe('5');
    await waitUntil(
      () => deliveryLog(org, '?status=succeeded'),
      (res) => res.body.webhooks.length === 1,
    );
    expect((await deliveryLog(org, '?status=failed')).body.webhooks).toEqual([]);
  });

  it('sends a test webhook on request, and refuses while url or secret is missing', async () => {
    const org = await createOrganization(t);
    expectProblem(await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}), 422, 'WEBHOOK_CONFIG_INCOMPLETE');
    // Not enabled: a test still goes out, so an integrator can check its endpoint first.
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, enabled: false, webhookTypes: ['kyc'] });
    const res = await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    const [webhook] = await receiver.waitFor((r) => r.length >= 1);
    expect(webhook.body).toEqual(
      expect.objectContaining({ id: res.body.id, resourceType: 'WebhookTest', action: 'test', organizationId: org.id, changes: null }),
    );
    expect(signatureIsValid(webhook, SECRET)).toBe(true);
    const detail = await t.http().get(`${WEBHOOKS_PATH}/${res.body.id}`).set(bearer(org.adminKey)).expect(200);
    expect(detail.body.webhookType).toBe('kyc');
    expectProblem(
      await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({ webhookType: 'email' }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('keeps the delivery log to admins of the organization', async () => {
    const a = await createOrganization(t);
    const b = await createOrganization(t);
    await configureWebhooks(t, a, { url: receiver.url, sharedSecret: SECRET });
    const sent = await t.http().post(`${CONFIG_PATH}/test`).set(bearer(a.adminKey)).send({}).expect(202);
    expectProblem(await t.http().get(`${WEBHOOKS_PATH}/${sent.body.id}`).set(bearer(b.adminKey)), 404, 'WEBHOOK_NOT_FOUND');
    expectProblem(await t.http().post(`${WEBHOOKS_PATH}/${sent.body.id}/redeliver`).set(bearer(b.adminKey)), 404, 'WEBHOOK_NOT_FOUND');
    expect((await deliveryLog(b)).body.webhooks).toEqual([]);
    expectProblem(await t.http().get(`${WEBHOOKS_PATH}/not-a-uuid`).set(bearer(a.adminKey)), 400, 'INVALID_PATH_PARAMETER');
    expectProblem(await t.http().get(`${WEBHOOKS_PATH}?status=lost`).set(bearer(a.adminKey)), 400, 'VALIDATION_FAILED');
  });

  it('exposes attempts, latency, queue depth and outbox lag at /metrics', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    await receiver.waitFor((r) => r.length >= 1);
    const text = (
      await waitUntil(
        () => t.http().get('/metrics'),
        (res) => /webhook_delivery_latency_seconds_count [1-9]/.test(res.text),
      )
    ).text;
    expect(text).toMatch(/webhook_attempts_total\{outcome="success"\} [1-9]/);
    expect(text).toMatch(/webhook_queue_depth\{state="waiting"\} \d+/);
    expect(text).toMatch(/outbox_lag_seconds \d/);
  });

  it('drops the days past the retention as whole partitions, deletes old rows kept outside them, and keeps the rest', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    const sent = await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    await waitUntil(
      () => deliveryLog(org, '?status=succeeded'),
      (res) => res.body.webhooks.length === 1,
    );
    // A day 31 days ago (past the 30-day default retention), with a partition of its own, holding
    // a copy of the webhook and its attempt under a UUIDv7 id of that day.
    const oldDay = new Date(Math.floor((Date.now() - 31 * 86_400_000) / 86_400_000) * 86_400_000);
    await t.app.get(DeliveryMaintenanceRepository).makePartitions(oldDay, oldDay);
    const suffix = oldDay.toISOString().slice(0, 10).replaceAll('-', '');
    const aged = uuidv7({ msecs: oldDay.getTime() + 3_600_000 });
    const copy = (id: string, createdAt: string) =>
      sql(
        t,
        `with d as (
           insert into webhook_delivery (id, event_id, endpoint_id, created_at, organization_id, webhook_type, resource_type, resource_id,
             action, payload, event_created_at, status, attempt_count, cycle_start_attempt)
           select ?, event_id, endpoint_id, ${createdAt}, organization_id, webhook_type, resource_type, resource_id, action, payload,
                  event_created_at, status, attempt_count, cycle_start_attempt
             from webhook_delivery where id = ?
           returning id, created_at)
         insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status) select id, 1, created_at, 5, 200 from d`,
        [id, sent.body.id],
      );
    await copy(aged, `'${new Date(oldDay.getTime() + 3_600_000).toISOString()}'`);
    // An id that is not a UUIDv7 lands outside the day partitions; past the retention it is deleted by row.
    const unpartitioned = randomUUID();
    await copy(unpartitioned, `now() - interval '31 days'`);
    const placed = await sql<{ id: string; part: string }>(
      t,
      `select id, tableoid::regclass::text as part from webhook_delivery where id in (?, ?)`,
      [aged, unpartitioned],
    );
    expect(Object.fromEntries(placed.map((r) => [r.id, r.part]))).toEqual({
      [aged]: `webhook_delivery_p${suffix}`,
      [unpartitioned]: 'webhook_delivery_default',
    });

    const fresh = await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    const pruned = await t.app.get(WebhookReconciler).prune();
    expect(pruned.partitions).toEqual(expect.arrayContaining([`webhook_attempt_p${suffix}`, `webhook_delivery_p${suffix}`]));
    expect(pruned.rows).toBeGreaterThanOrEqual(1);
    const [gone] = await sql<{ delivery: string | null; attempt: string | null }>(
      t,
      `select to_regclass(?) as delivery, to_regclass(?) as attempt`,
      [`webhook_delivery_p${suffix}`, `webhook_attempt_p${suffix}`],
    );
    expect(gone).toEqual({ delivery: null, attempt: null });
    for (const id of [aged, unpartitioned]) {
      expectProblem(await t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)), 404, 'WEBHOOK_NOT_FOUND');
    }
    expect(await sql(t, `select 1 from webhook_attempt where delivery_id in (?, ?)`, [aged, unpartitioned])).toEqual([]);
    await t.http().get(`${WEBHOOKS_PATH}/${sent.body.id}`).set(bearer(org.adminKey)).expect(200);
    await t.http().get(`${WEBHOOKS_PATH}/${fresh.body.id}`).set(bearer(org.adminKey)).expect(200);
    // Days ahead are made by the same pass, so tomorrow's webhooks have their partition waiting.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
    const [ahead] = await sql<{ made: string | null }>(t, `select to_regclass(?) as made`, [`webhook_delivery_p${tomorrow}`]);
    expect(ahead.made).toBe(`webhook_delivery_p${tomorrow}`);
  });
});
