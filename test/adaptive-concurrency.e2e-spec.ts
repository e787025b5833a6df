import Redis from 'ioredis';
import { Client } from 'pg';
import { appliedChanges, grantFor } from '../src/modules/webhooks/engine/in-flight-grant.rules';
import { GRANT_SCRIPT } from '../src/modules/webhooks/engine/in-flight-grant.script';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { ServiceProcess } from './support/service-process';
import { createTestApp, HttpTarget, TestApp, testEnv } from './support/test-app';
import { addEndpoint, createWallet, ENDPOINTS_PATH, WEBHOOKS_PATH } from './support/webhooks';

const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';

interface LoggedAttempt {
  attempt: number;
  startedAtUtc: string;
  responseStatus: number | null;
  error: string | null;
  inFlightLimit: number | null;
}
interface LoggedWebhook {
  id: string;
  resourceId: string;
  status: string;
  attemptCount: number;
  attempts: LoggedAttempt[];
}

/** Every webhook of the endpoint with its attempts, as the delivery log answers. */
async function logOf(t: HttpTarget, org: TestOrganization, endpointId: string): Promise<LoggedWebhook[]> {
  const page = await t.http().get(`${WEBHOOKS_PATH}?pageSize=1000&endpointId=${endpointId}`).set(bearer(org.adminKey)).expect(200);
  return Promise.all(
    (page.body.webhooks as { id: string }[]).map(
      async (w) => (await t.http().get(`${WEBHOOKS_PATH}/${w.id}`).set(bearer(org.adminKey)).expect(200)).body as LoggedWebhook,
    ),
  );
}

/** The endpoint's current limit as /metrics shows it; null while it shows none. */
async function limitInMetrics(t: HttpTarget, endpointId: string): Promise<number | null> {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const match = new RegExp(`^webhook_endpoint_in_flight_limit\\{endpoint_id="${endpointId}"\\} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

/** Wallets created a few at a time; each becomes one `custodialAccount` webhook per endpoint. */
async function createWallets(t: HttpTarget, org: TestOrganization, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    ids.push(...(await Promise.all(Array.from({ length: Math.min(10, count - i) }, (_, j) => createWallet(t, org, `${tag}-${i + j}`)))));
  }
  return ids;
}

/**
 * Concurrency that adapts per endpoint: an endpoint's `maxInFlight` bounds its attempts in flight
 * across workers, and within it the limit falls when the receiver slows or refuses, as the
 * delivery log (`inFlightLimit` of each attempt) and /metrics show.
 */
describe('concurrency that adapts per endpoint', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;

  beforeAll(async () => {
    // Time enough for a 300 ms receiver, and retries enough to outlast a receiver refusing for a while.
    t = await createTestApp({ WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s,1s,1s,1s,1s,1s' });
    receiver = await new TestReceiver().start();
    org = await createOrganization(t);
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  describe('maxInFlight', () => {
    it('is set by POST, shown by GET, changed and cleared by PATCH, and audited', async () => {
      const created = await addEndpoint(t, org, receiver.urlFor('/settings'), { webhookTypes: [], maxInFlight: 200 });
      const get = async () => (await t.http().get(`${ENDPOINTS_PATH}/${created.id}`).set(bearer(org.adminKey)).expect(200)).body;
      expect((await get()).maxInFlight).toBe(200);
      const patched = await t
        .http()
        .patch(`${ENDPOINTS_PATH}/${created.id}`)
        .set(bearer(org.adminKey))
        .send({ maxInFlight: 1 })
        .expect(200);
      expect(patched.body.maxInFlight).toBe(1);
      await t.http().patch(`${ENDPOINTS_PATH}/${created.id}`).set(bearer(org.adminKey)).send({ description: 'x' }).expect(200);
      expect((await get()).maxInFlight).toBe(1);
      await t.http().patch(`${ENDPOINTS_PATH}/${created.id}`).set(bearer(org.adminKey)).send({ maxInFlight: null }).expect(200);
      expect((await get()).maxInFlight).toBeNull();

      const audit = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).query({ pageSize: 1000 }).expect(200);
      const changes = (audit.body.entries as { action: string; changes: Record<string, unknown> }[])
        .filter((e) => e.changes.maxInFlight !== undefined)
        .map((e) => [e.action, e.changes.maxInFlight]);
      expect(changes).toEqual(
        expect.arrayContaining([
          ['webhookEndpoint.create', { from: null, to: 200 }],
          ['webhookEndpoint.update', { from: 200, to: 1 }],
          ['webhookEndpoint.update', { from: 1, to: null }],
        ]),
      );
      await t.http().delete(`${ENDPOINTS_PATH}/${created.id}`).set(bearer(org.adminKey)).expect(204);
    });

    it.each([[0], [1001], ['x'], [1.5]])('refuses %p with a 400 naming maxInFlight, storing nothing', async (value) => {
      const list = async () => (await t.http().get(ENDPOINTS_PATH).set(bearer(org.adminKey)).expect(200)).body.endpoints;
      const before = await list();
      const posted = await t
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({ url: receiver.urlFor('/refused'), webhookTypes: [], maxInFlight: value });
      expectProblem(posted, 400, 'VALIDATION_FAILED');
      expect(posted.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'maxInFlight' })]));
      const patched = await t.http().patch(`${ENDPOINTS_PATH}/${org.id}`).set(bearer(org.adminKey)).send({ maxInFlight: value });
      expectProblem(patched, 400, 'VALIDATION_FAILED');
      expect(patched.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'maxInFlight' })]));
      expect(await list()).toEqual(before);
    });
  });

  it('raises the limit above the default while the receiver answers in about 1 ms, and lowers it back when it slows to 300 ms, with no request timing out', async () => {
    const endpoint = await addEndpoint(t, org, receiver.urlFor('/slowing'), { webhookTypes: ['custodialAccount'], maxInFlight: 20 });
    let slow = false;
    receiver.behaviour = (_n, w) => (w.path === '/slowing' && slow ? { status: 200, delayMs: 300 } : { status: 200 });
    const at = (received: ReceivedWebhook[]) => received.filter((w) => w.path === '/slowing');

    const fast = await createWallets(t, org, 40, 'fast');
    await receiver.waitFor((r) => at(r).length >= fast.length);
    slow = true;
    const slowed = await createWallets(t, org, 120, 'slow');
    const log = await waitUntil(
      () => logOf(t, org, endpoint.id),
      (webhooks) => webhooks.length === fast.length + slowed.length && webhooks.every((w) => w.status === 'succeeded'),
      90_000,
    );

    // Every webhook arrived at its first attempt: the slower receiver was never pushed into a timeout.
    expect(log.map((w) => [w.attemptCount, w.attempts.map((a) => [a.responseStatus, a.error])])).toEqual(log.map(() => [1, [[200, null]]]));
    const limits = (resources: string[]) =>
      log.filter((w) => resources.includes(w.resourceId)).flatMap((w) => w.attempts.map((a) => a.inFlightLimit!));
    // The first attempts started at the service's default of 10; quick answers raised it towards maxInFlight.
    expect(Math.min(...limits(fast))).toBe(10);
    expect(Math.max(...limits(fast.concat(slowed)))).toBeGreaterThan(10);
    // Once it slowed, later attempts started under a lower limit, a fifth less per round trip, back
    // to the default, which latency alone never goes below (only refusals and timeouts do).
    expect(Math.min(...limits(slowed))).toBe(10);
    expect(await limitInMetrics(t, endpoint.id)).toBe(10);
    await t.http().delete(`${ENDPOINTS_PATH}/${endpoint.id}`).set(bearer(org.adminKey)).expect(204);
  }, 120_000);

  it('lowers the limit to the floor on a receiver answering 503 and 429, while Retry-After still holds each webhook back', async () => {
    const endpoint = await addEndpoint(t, org, receiver.urlFor('/refusing'), { webhookTypes: ['custodialAccount'], maxInFlight: 20 });
    let refusing = true;
    receiver.behaviour = (n, w) => {
      if (w.path !== '/refusing' || !refusing) return { status: 200 };
      return { status: n % 2 === 0 ? 503 : 429, headers: { 'retry-after': '2' }, body: 'busy' };
    };
    const wallets = await createWallets(t, org, 20, 'refused');
    expect(
      await waitUntil(
        () => limitInMetrics(t, endpoint.id),
        (limit) => limit === 1,
        60_000,
      ),
    ).toBe(1);
    refusing = false;
    const log = await waitUntil(
      () => logOf(t, org, endpoint.id),
      (webhooks) => webhooks.length === wallets.length && webhooks.every((w) => w.status === 'succeeded'),
      60_000,
    );
    const attempts = log.flatMap((w) => w.attempts);
    // Refused attempts first started under the default limit of 10, and later ones under the floor.
    expect(Math.max(...attempts.map((a) => a.inFlightLimit!))).toBe(10);
    expect(attempts.some((a) => a.inFlightLimit === 1)).toBe(true);
    // Retry-After: 2 held every webhook's next attempt back at least 2 s after a refusal, as the receiver saw it.
    for (const webhook of log) {
      const receipts = receiver.received
        .filter((w) => w.path === '/refusing' && w.body.id === webhook.id)
        .map((w) => w.receivedAt)
        .sort((a, b) => a - b);
      expect(receipts).toHaveLength(webhook.attemptCount);
      for (let i = 1; i < receipts.length; i++) expect(receipts[i] - receipts[i - 1]).toBeGreaterThanOrEqual(2000);
      expect(webhook.attempts.at(-1)!.responseStatus).toBe(200);
      expect(webhook.attempts.slice(0, -1).every((a) => a.responseStatus === 503 || a.responseStatus === 429)).toBe(true);
    }
  }, 120_000);
});

/**
 * Two worker processes share one endpoint's limit through Redis: the receiver never has more
 * requests at once than the endpoint's maxInFlight, though each worker alone would allow that many.
 */
describe('an endpoint’s in-flight limit, across worker processes', () => {
  const MAX_IN_FLIGHT = 3;
  const WRITES = 60;
  let database: { url: string; drop: () => Promise<void> };
  let db: Client;
  let api: ServiceProcess | undefined;
  const workers: ServiceProcess[] = [];
  let t: HttpTarget;
  let receiver: TestReceiver;
  const queuePrefix = `adapt${Date.now().toString(36)}`;

  beforeAll(async () => {
    database = await createIsolatedDatabase('adaptive');
    db = new Client({ connectionString: database.url });
    await db.connect();
    const env = testEnv({ DATABASE_URL: database.url, QUEUE_PREFIX: queuePrefix, WEBHOOK_TIMEOUT_MS: '3000' });
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

  it(`never has more than maxInFlight (${MAX_IN_FLIGHT}) requests at the receiver at once, and delivers each of ${WRITES} webhooks once`, async () => {
    const org = await createOrganization(t);
    const endpoint = await addEndpoint(t, org, receiver.urlFor('/shared'), {
      webhookTypes: ['custodialAccount'],
      maxInFlight: MAX_IN_FLIGHT,
    });
    let inFlight = 0;
    let most = 0;
    receiver.behaviour = (_n, w) => {
      if (w.path !== '/shared') return { status: 200 };
      inFlight += 1;
      most = Math.max(most, inFlight);
      // Scheduled before the answer (same delay, timers run in order): counted out before it leaves.
      setTimeout(() => (inFlight -= 1), 100);
      return { status: 200, delayMs: 100 };
    };
    // The workers' grants of the endpoint, as Redis records them while the webhooks go out.
    const redis = new Redis('redis://127.0.0.1:6379');
    const grantSums: number[] = [];
    const holders = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const grants = await redis.hgetall(`${queuePrefix}:endpoint-in-flight:grants:{${endpoint.id}}`);
        const held = Object.entries(grants).map(([worker, value]) => [worker, Number(value.split(':')[0])] as const);
        for (const [worker, n] of held) if (n > 0) holders.add(worker);
        grantSums.push(held.reduce((sum, [, n]) => sum + n, 0));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const wallets = await createWallets(t, org, WRITES, 'shared');
    await receiver.waitFor((r) => new Set(r.filter((w) => w.path === '/shared').map((w) => w.body.resourceId)).size >= WRITES, 90_000);
    sampling = false;
    await sampler;
    redis.disconnect();
    // Both workers held places of the endpoint, and together never more than maxInFlight.
    expect(holders.size).toBe(2);
    expect(Math.max(...grantSums)).toBeLessThanOrEqual(MAX_IN_FLIGHT);

    const received = receiver.received.filter((w) => w.path === '/shared');
    expect(received).toHaveLength(WRITES);
    expect(new Set(received.map((w) => w.body.resourceId))).toEqual(new Set(wallets));
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    // Every attempt started under a limit within maxInFlight, as the delivery log records it.
    // (Results are written in batches just after the answers.)
    const rows = await waitUntil(
      async () =>
        (
          await db.query<{ in_flight_limit: number; n: string }>(
            `select a.in_flight_limit, count(*) as n from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id
              where d.endpoint_id = $1 group by a.in_flight_limit`,
            [endpoint.id],
          )
        ).rows,
      (found) => found.reduce((sum, r) => sum + Number(r.n), 0) >= WRITES,
    );
    expect(rows.every((r) => r.in_flight_limit >= 1 && r.in_flight_limit <= MAX_IN_FLIGHT)).toBe(true);
    expect(rows.reduce((sum, r) => sum + Number(r.n), 0)).toBe(WRITES);
  }, 150_000);
});

/**
 * The grant script in Redis does the arithmetic of the pure rules it mirrors (appliedChanges,
 * grantFor), checked on random grants, limits and changes against a real Redis.
 */
describe('the in-flight grant script', () => {
  let redis: Redis;
  const prefix = `grant-mirror-${Date.now().toString(36)}-${process.pid}`;
  beforeAll(() => {
    redis = new Redis('redis://127.0.0.1:6379');
    redis.defineCommand('inFlightGrant', { numberOfKeys: 2, lua: GRANT_SCRIPT });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('drops expired grants, applies the changes and grants what the rules grant, for 300 random cases', async () => {
    let seed = 42;
    const rand = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * below);
    };
    const grant = (redis as unknown as { inFlightGrant(...args: (string | number)[]): Promise<number[]> }).inFlightGrant.bind(redis);
    const mismatches: string[] = [];
    for (let i = 0; i < 300; i++) {
      const grantsKey = `${prefix}:grants:{${i}}`;
      const limitKey = `${prefix}:limit:{${i}}`;
      const max = 1 + rand(20);
      const [seconds, micros] = await redis.time();
      const before = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const others = Array.from({ length: rand(4) }, (_, j) => ({
        id: `other-${j}`,
        held: rand(max + 1),
        want: rand(max + 1),
        expired: rand(4) === 0,
      }));
      for (const o of others) await redis.hset(grantsKey, o.id, `${o.held}:${o.want}:${o.expired ? before - 1 : before + 60_000}`);
      const stored = rand(3) === 0 ? null : { limit: 1 + rand(max + 5), threshold: 1 + rand(max + 5), lastCutAt: before - rand(2000) };
      if (stored) await redis.hset(limitKey, 'l', stored.limit, 't', stored.threshold, 'c', stored.lastCutAt);
      const start = 1 + rand(max);
      const held = rand(max + 1);
      const want = rand(max + 3);
      const ask = rand(2) === 0 ? want : rand(max + 1);
      const grow = rand(3) === 0 ? 1 + rand(10) : 0;
      const cut = rand(3) === 0 ? { to: 1 + rand(max), startedAt: before - rand(3000) } : null;
      const reply = await grant(
        grantsKey,
        limitKey,
        'me',
        max,
        start,
        held,
        want,
        60_000,
        grow,
        cut?.to ?? 0,
        cut?.startedAt ?? 0,
        60_000,
        ask,
      );
      const now = reply[7];
      const shared = appliedChanges(stored ?? { limit: start, threshold: max, lastCutAt: 0 }, { grow, cut }, now, max);
      const live = others.filter((o) => !o.expired);
      const expectedGrant = grantFor({
        limit: shared.limit,
        want: Math.min(want, shared.limit),
        ask,
        held,
        others: live.map((o) => ({ held: o.held, want: Math.min(o.want, shared.limit) })),
      });
      const expected = [
        expectedGrant.target,
        expectedGrant.hold,
        shared.limit,
        shared.threshold,
        shared.lastCutAt,
        live.reduce((sum, o) => sum + o.held, 0),
        live.reduce((sum, o) => sum + Math.max(0, o.want - o.held), 0),
        now,
      ];
      const recorded = await redis.hgetall(grantsKey);
      const mine = recorded.me ? recorded.me.split(':').slice(0, 2).map(Number) : null;
      const expectedMine =
        expectedGrant.hold === 0 && Math.min(want, shared.limit) === 0 ? null : [expectedGrant.hold, Math.min(want, shared.limit)];
      const expectedFields = [...live.map((o) => o.id), ...(expectedMine ? ['me'] : [])].sort();
      if (
        JSON.stringify(reply) !== JSON.stringify(expected) ||
        JSON.stringify(mine) !== JSON.stringify(expectedMine) ||
        JSON.stringify(Object.keys(recorded).sort()) !== JSON.stringify(expectedFields)
      ) {
        mismatches.push(
          `case ${i}: got ${JSON.stringify([reply, mine, Object.keys(recorded)])}, expected ${JSON.stringify([expected, expectedMine, expectedFields])}`,
        );
      }
    }
    expect(mismatches).toEqual([]);
  });
});
