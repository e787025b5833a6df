import { Client } from 'pg';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { oauth2Auth, TokenServer } from './support/oauth2';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { ServiceProcess } from './support/service-process';
import { HttpTarget, testEnv } from './support/test-app';
import { createWallet } from './support/webhooks';

const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';
const RATE = 20;
const WRITES = 200;
const RESEND_RATE = 5;
const RESEND_WRITES = 30;

/**
 * An endpoint's rate limit holds across worker processes: an API process and two worker
 * processes of their own, on a database and queue of their own, and one receiver host with a
 * limited endpoint (20 a second) and an unlimited one, both taking the same 200 webhooks.
 *
 * Receipts are counted per window of the sender: an attempt to a rate-limited endpoint is
 * signed with the time its window gave it its place, so its `webhook-timestamp` is that window's
 * second. (Counting by the receiver's clock instead would put an attempt given its place at the
 * very end of one second into the next whenever the request takes longer than what is left of it.)
 */
describe('an endpoint’s rate limit, across worker processes', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Client;
  let api: ServiceProcess | undefined;
  const workers: ServiceProcess[] = [];
  let t: HttpTarget;
  let receiver: TestReceiver;

  beforeAll(async () => {
    database = await createIsolatedDatabase('ratelimit');
    db = new Client({ connectionString: database.url });
    await db.connect();
    const env = testEnv({ DATABASE_URL: database.url, QUEUE_PREFIX: `rate${Date.now().toString(36)}` });
    // The API first: it applies the migrations the workers then find done.
    api = await ServiceProcess.start({ ...env, ROLE: 'api' });
    workers.push(
      ...(await Promise.all([ServiceProcess.start({ ...env, ROLE: 'worker' }), ServiceProcess.start({ ...env, ROLE: 'worker' })])),
    );
    t = api.client;
    receiver = await new TestReceiver().start();
  }, 120_000);
  afterAll(async () => {
    await api?.stop();
    await Promise.all(workers.map((w) => w.stop()));
    await receiver?.stop();
    await db?.end();
    await database?.drop();
  }, 60_000);

  const addEndpoint = async (org: TestOrganization, path: string, rateLimitPerSecond?: number) =>
    (
      await t
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({
          url: receiver.urlFor(path),
          sharedSecret: 'rate-limit-secret-0123456789',
          webhookTypes: ['custodialAccount'],
          rateLimitPerSecond,
        })
        .expect(201)
    ).body as { id: string; rateLimitPerSecond: number | null };

  it(`sends at most ${RATE} attempts a second to a limited endpoint, all ${WRITES} exactly once, while an unlimited one on the same host is not held back`, async () => {
    const org = await createOrganization(t);
    const limited = await addEndpoint(org, '/limited', RATE);
    const unlimited = await addEndpoint(org, '/unlimited');
    expect([limited.rateLimitPerSecond, unlimited.rateLimitPerSecond]).toEqual([RATE, null]);

    const wallets: string[] = [];
    for (let i = 0; i < WRITES; i += 20) {
      wallets.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => createWallet(t, org, `rate-${i + j}`)))));
    }
    const to = (path: string) => (received: ReceivedWebhook[]) => received.filter((w) => w.path === path);
    await receiver.waitFor((r) => to('/unlimited')(r).length >= WRITES && to('/limited')(r).length >= WRITES, 45_000);
    // A moment more, to see any extra send.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const limitedReceipts = to('/limited')(receiver.received);
    const unlimitedReceipts = to('/unlimited')(receiver.received);
    // Exactly once each: every wallet's webhook, no duplicates.
    for (const receipts of [limitedReceipts, unlimitedReceipts]) {
      expect(receipts).toHaveLength(WRITES);
      expect(new Set(receipts.map((w) => w.body.resourceId))).toEqual(new Set(wallets));
    }

    // Never more than the limit in one second of the sender's windows.
    const perSecond = new Map<string, number>();
    for (const w of limitedReceipts) {
      const second = String(w.headers['webhook-timestamp']);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(RATE);
    // So the 200 took at least 10 seconds' windows.
    expect(perSecond.size).toBeGreaterThanOrEqual(WRITES / RATE);

    // Waiting was never an attempt: every webhook succeeded at its first attempt.
    const { rows } = await db.query<{ endpoint_id: string; status: string; attempt_count: number; count: string }>(
      `select endpoint_id, status, attempt_count, count(*) from webhook_delivery where organization_id = $1
        group by endpoint_id, status, attempt_count order by endpoint_id`,
      [org.id],
    );
    expect(rows.map((r) => ({ ...r, count: Number(r.count) })).sort((a, b) => a.endpoint_id.localeCompare(b.endpoint_id))).toEqual(
      [
        { endpoint_id: limited.id, status: 'succeeded', attempt_count: 1, count: WRITES },
        { endpoint_id: unlimited.id, status: 'succeeded', attempt_count: 1, count: WRITES },
      ].sort((a, b) => a.endpoint_id.localeCompare(b.endpoint_id)),
    );

    // The unlimited endpoint kept pace with the writes, not with the limited endpoint: it had all
    // of its webhooks while the limited one still had at least two seconds' worth to come. (The
    // writes themselves pace the unlimited endpoint; on a busy machine they take several seconds.)
    const unlimitedDoneAt = Math.max(...unlimitedReceipts.map((w) => w.receivedAt));
    expect(limitedReceipts.filter((w) => w.receivedAt <= unlimitedDoneAt).length).toBeLessThanOrEqual(WRITES - 2 * RATE);
  }, 90_000);
  it(`counts the resend after a 401 as a request under the limit: at most ${RESEND_RATE} in each of the sender's seconds, at most twice that in any sliding second`, async () => {
    const tokens = await new TokenServer().start();
    try {
      const org = await createOrganization(t);
      await t
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({
          url: receiver.urlFor('/resend'),
          webhookTypes: ['custodialAccount'],
          rateLimitPerSecond: RESEND_RATE,
          auth: oauth2Auth(tokens),
        })
        .expect(201);
      // Every webhook's first request is refused with a 401, as if its token had just been revoked.
      const seen = new Set<string>();
      receiver.behaviour = (_n, webhook) => {
        if (webhook.path !== '/resend') return { status: 200 };
        const id = String(webhook.body.id);
        const first = !seen.has(id);
        seen.add(id);
        return { status: first ? 401 : 200 };
      };
      const wallets: string[] = [];
      for (let i = 0; i < RESEND_WRITES; i += 10) {
        wallets.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => createWallet(t, org, `resend-${i + j}`)))));
      }
      const resends = () => receiver.received.filter((w) => w.path === '/resend');
      // Each webhook twice: the refused request and the one with a new token.
      await receiver.waitFor(
        () => new Set(resends().map((w) => w.body.id)).size >= RESEND_WRITES && resends().length >= 2 * RESEND_WRITES,
        60_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const received = resends();
      expect(new Set(received.map((w) => w.body.resourceId))).toEqual(new Set(wallets));
      expect(received.every((w) => String(w.headers.authorization).startsWith('Bearer tok-'))).toBe(true);

      // Each request is signed with the second its place was given in, resends included.
      const perSecond = new Map<string, number>();
      for (const w of received) {
        const second = String(w.headers['webhook-timestamp']);
        perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
      }
      expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(RESEND_RATE);
      // As the receiver counts: never more than twice the limit in any sliding second.
      const times = received.map((w) => w.receivedAt).sort((a, b) => a - b);
      const busiest = Math.max(...times.map((from, i) => times.slice(i).filter((at) => at < from + 1000).length));
      expect(busiest).toBeLessThanOrEqual(2 * RESEND_RATE);

      const statuses = async () =>
        (
          await db.query<{ status: string; count: string }>(
            `select status, count(*) from webhook_delivery where organization_id = $1 group by status`,
            [org.id],
          )
        ).rows.map((r) => [r.status, Number(r.count)]);
      expect(await waitUntil(statuses, (rows) => rows.length === 1 && rows[0][0] === 'succeeded')).toEqual([['succeeded', RESEND_WRITES]]);
    } finally {
      await tokens.stop();
    }
  }, 90_000);
});
