import { MikroORM } from '@mikro-orm/postgresql';
import { WebhookReconciler } from '../src/modules/webhooks/maintenance/webhook-reconciler.service';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';
import { uuid7Sql } from './support/nft';

const SECRET = 'engine-shared-secret-0001';

/** Compare-and-set results, permanent errors, and the reconciler's fairness and single runner. */
describe('webhook delivery engine', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    // A long time limit leaves room to redeliver while an attempt is in flight; a first retry a
    // second away leaves room to change the configuration between attempts; the reconciler runs
    // only when a test calls it.
    t = await createTestApp({ WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s', WEBHOOK_RECONCILE_INTERVAL: '1h' });
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

  const sql = <T>(text: string, params: unknown[] = []) => t.app.get(MikroORM).em.getConnection().execute<T>(text, params);
  const detail = (org: TestOrganization, id: string) => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)).expect(200);

  it('a redelivery asked while an attempt is in flight is not overwritten by its late result: it is sent', async () => {
    receiver.behaviour = (n) => ({ status: 200, delayMs: n === 1 ? 2500 : 0 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const [first] = await receiver.waitFor((r) => r.length >= 1);
    const id = first.body.id as string;

    await t.http().post(`${WEBHOOKS_PATH}/${id}/redeliver`).set(bearer(org.adminKey)).expect(202);
    // The first attempt is still waiting for its answer: the redelivery really came in flight.
    expect(Date.now() - first.receivedAt).toBeLessThan(2500);

    const received = await receiver.waitFor((r) => r.length >= 2, 20_000);
    expect(received[1].body.id).toBe(id);
    expect(received[1].headers['x-service-webhook-attempt']).toBe('2');
    expect(signatureIsValid(received[1], SECRET)).toBe(true);
    const done = await waitUntil(
      () => detail(org, id),
      (res) =>
        res.body.status === 'succeeded' && res.body.attempts.every((a: { responseStatus: number | null }) => a.responseStatus === 200),
    );
    expect(done.body.attemptCount).toBe(2);
  });

  it('a shared secret that cannot be opened ends the webhook failed at once, with the reason in its log', async () => {
    const org = await createOrganization(t);
    const other = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await configureWebhooks(t, other, { url: receiver.url, sharedSecret: 'another-secret-000001' });
    // A sealed value moved from another row does not open here (it is bound to its organization).
    await sql(
      'update webhook_endpoint set shared_secret_sealed = (select shared_secret_sealed from webhook_endpoint where id = ?) where id = ?',
      [other.id, org.id],
    );
    await createWallet(t, org);

    const failed = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?status=failed`).set(bearer(org.adminKey)).expect(200),
      (res) => res.body.webhooks.length === 1,
    );
    const id = failed.body.webhooks[0].id as string;
    const log = await detail(org, id);
    expect(log.body).toEqual(expect.objectContaining({ status: 'failed', attemptCount: 1, nextAttemptAtUtc: null }));
    expect(log.body.attempts).toEqual([
      expect.objectContaining({ attempt: 1, responseStatus: null, error: expect.stringMatching(/shared secret cannot be opened/) }),
    ]);
    expect(receiver.received).toHaveLength(0);
  });

  it('a configuration gone between attempts ends the webhook failed at the next attempt, not after the whole schedule', async () => {
    receiver.behaviour = () => ({ status: 500 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const [first] = await receiver.waitFor((r) => r.length >= 1);
    await sql('delete from webhook_endpoint where id = ?', [org.id]);

    const log = await waitUntil(
      () => detail(org, first.body.id as string),
      (res) => res.body.status === 'failed',
      20_000,
    );
    const attempts = log.body.attempts as { responseStatus: number | null; error: string | null }[];
    // Every attempt made before the configuration went reached the receiver; the one after it is the last.
    expect(attempts.length).toBe(receiver.received.length + 1);
    expect(attempts.length).toBeLessThan(4);
    expect(attempts[attempts.length - 1]).toEqual(
      expect.objectContaining({ responseStatus: null, error: expect.stringMatching(/no url/) }),
    );
  });

  it("recovery is fair: one organization's 1,000 stuck events do not hold back another organization's", async () => {
    const busy = await createOrganization(t);
    const quiet = await createOrganization(t);
    await configureWebhooks(t, quiet, { url: receiver.url, sharedSecret: SECRET });
    // Events whose jobs were lost (relayed, never judged, older than the reconciler's grace of one
    // interval), the busy organization's all older.
    await sql(
      `insert into domain_event (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, changes, relayed_at)
       select ${uuid7Sql()}, now() - interval '3 hours' + i * interval '1 ms', ?, 'transaction', 'Transaction', gen_random_uuid(), 'create', null, now()
         from generate_series(1, 1000) i`,
      [busy.id],
    );
    const [quietEvent] = await sql<{ id: string; resource_id: string }[]>(
      `insert into domain_event (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, changes, relayed_at)
       values (${uuid7Sql()}, now() - interval '2 hours', ?, 'transaction', 'Transaction', gen_random_uuid(), 'create', null, now())
       returning id, resource_id`,
      [quiet.id],
    );

    const queued = await t.app.get(WebhookReconciler).reconcile();
    expect(queued).toContain(quietEvent.id);
    const [delivered] = await receiver.waitFor((r) => r.length >= 1, 20_000);
    expect(delivered.body).toEqual(expect.objectContaining({ id: quietEvent.id, resourceId: quietEvent.resource_id }));
    // The busy organization's backlog is recovered too, a bounded share per pass.
    const [{ n }] = await sql<{ n: number }[]>(
      'select count(*)::int as n from domain_event where organization_id = ? and processed_at is not null',
      [busy.id],
    );
    expect(n).toBeGreaterThan(0);
    expect(queued.length).toBeLessThan(1001);
  });

  it('one worker at a time runs the reconciler: a pass started meanwhile stands aside', async () => {
    const reconciler = t.app.get(WebhookReconciler);
    let release: () => void = () => undefined;
    // Other suites' workers share the database and take the lock for their own passes: retry until ours.
    let holding: Promise<string | null> = Promise.resolve(null);
    let entered = false;
    await waitUntil(
      async () => {
        holding = reconciler.withLock(() => {
          entered = true;
          return new Promise<string>((resolve) => (release = () => resolve('first')));
        });
        return Promise.race([holding, new Promise((r) => setTimeout(r, 200, 'pending'))]);
      },
      () => entered,
    );
    expect(await reconciler.withLock(() => Promise.resolve('second'))).toBeNull();
    release();
    expect(await holding).toBe('first');
    await waitUntil(
      () => reconciler.withLock(() => Promise.resolve('after')),
      (result) => result === 'after',
    );
  });
});
