import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { nftApi, sql, UNKNOWN_ID } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, WEBHOOKS_PATH } from './support/webhooks';

const STATS_PATH = `${WEBHOOKS_PATH}/stats`;
const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';
const SECRET = 'stats-receiver-secret-0001';
const MINUTE = 60_000;
const BUCKET_START = /^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000000\+00:00$/;

interface Bucket {
  startUtc: string;
  succeeded: number;
  failed: number;
  retried: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

interface LoggedWebhook {
  id: string;
  endpointId: string;
  resourceType: string;
  status: string;
  attemptCount: number;
  createdAtUtc: string;
}

/** percentile_cont as PostgreSQL defines it: linear interpolation between the closest ranks. */
function percentileCont(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = fraction * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (position - lower) * (sorted[upper] - sorted[lower]);
}

const contractTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000+00:00');

const sum = (buckets: Bucket[]) =>
  buckets.reduce((s, x) => ({ succeeded: s.succeeded + x.succeeded, failed: s.failed + x.failed, retried: s.retried + x.retried }), {
    succeeded: 0,
    failed: 0,
    retried: 0,
  });

describe('webhook delivery statistics (GET …/webhooks/stats)', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let a: TestOrganization;
  let b: TestOrganization;
  let logA: LoggedWebhook[];
  let logB: LoggedWebhook[];

  const stats = (org: TestOrganization | string, query: Record<string, string> = {}) =>
    t
      .http()
      .get(STATS_PATH)
      .query(query)
      .set(bearer(typeof org === 'string' ? org : org.adminKey));

  /** The whole delivery log once nothing is pending any more. */
  const settledLog = async (org: TestOrganization, count: number): Promise<LoggedWebhook[]> =>
    (
      await waitUntil(
        () => t.http().get(`${WEBHOOKS_PATH}?pageSize=1000`).set(bearer(org.adminKey)),
        (res) =>
          res.status === 200 && res.body.webhooks.length === count && res.body.webhooks.every((w: LoggedWebhook) => w.status !== 'pending'),
        30_000,
      )
    ).body.webhooks;

  beforeAll(async () => {
    // Three attempts in well under a second: a webhook that never gets a 2xx ends failed quickly.
    t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' });
    receiver = await new TestReceiver().start();
    // Wallets are accepted at once, tokens never, transactions on their second attempt.
    receiver.behaviour = (_n, webhook) => {
      if (webhook.body.resourceType === 'Token') return { status: 503 };
      if (webhook.body.resourceType === 'Transaction' && webhook.headers['x-service-webhook-attempt'] === '1') return { status: 500 };
      return { status: 200 };
    };
    a = await createOrganization(t);
    b = await createOrganization(t);
    await configureWebhooks(t, a, { url: receiver.url, sharedSecret: SECRET });
    await configureWebhooks(t, b, { url: receiver.url, sharedSecret: SECRET });

    const apiA = nftApi(t, a.adminKey);
    const apiB = nftApi(t, b.adminKey);
    const walletsA = [await apiA.wallet({ name: 'a1' }), await apiA.wallet({ name: 'a2' }), await apiA.wallet({ name: 'a3' })];
    // The other organization's webhooks are made in the same minutes, interleaved.
    await apiB.wallet({ name: 'b1' });
    const tokensA = [await apiA.token(), await apiA.token()];
    await apiB.token();
    await apiA.mint(tokensA[0].id, walletsA[0].id);
    await apiB.wallet({ name: 'b2' });
    await apiA.mint(tokensA[1].id, walletsA[1].id);

    // A: 3 wallets (succeeded), 2 tokens (failed after 3 attempts), 2 transactions (succeeded on the 2nd).
    logA = await settledLog(a, 7);
    // B: 2 wallets (succeeded), 1 token (failed).
    logB = await settledLog(b, 3);
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  it('ends the webhooks as the receiver made them: the ground truth of the counts below', () => {
    const summary = (log: LoggedWebhook[]) => log.map((w) => `${w.resourceType} ${w.status} ${w.attemptCount}`).sort();
    expect(summary(logA)).toEqual([
      'Token failed 3',
      'Token failed 3',
      'Transaction succeeded 2',
      'Transaction succeeded 2',
      'Wallet succeeded 1',
      'Wallet succeeded 1',
      'Wallet succeeded 1',
    ]);
    expect(summary(logB)).toEqual(['Token failed 3', 'Wallet succeeded 1', 'Wallet succeeded 1']);
  });

  it('counts each minute bucket exactly, with the latency percentiles of its succeeded webhooks, and zeros around', async () => {
    const created = logA.map((w) => Date.parse(w.createdAtUtc));
    const since = Math.floor(Math.min(...created) / MINUTE) * MINUTE - 2 * MINUTE;
    const until = Math.floor(Math.max(...created) / MINUTE) * MINUTE + 2 * MINUTE;
    const res = await stats(a, { since: contractTime(since), until: contractTime(until), bucket: '1m' }).expect(200);
    const buckets: Bucket[] = res.body.buckets;
    expect(Object.keys(res.body)).toEqual(['buckets']);
    expect(buckets).toHaveLength((until - since) / MINUTE);

    // Latencies as the database holds them, to check the percentiles against an independent computation.
    const latencies = await sql<{ id: string; latency_ms: number }>(
      t,
      `select id, extract(epoch from succeeded_at - created_at)::float8 * 1000 as latency_ms
         from webhook_delivery where organization_id = ? and status = 'succeeded'`,
      [a.id],
    );
    const latencyOf = new Map(latencies.map((r) => [r.id, Number(r.latency_ms)]));

    buckets.forEach((bucket, i) => {
      const start = since + i * MINUTE;
      expect(bucket.startUtc).toBe(contractTime(start));
      expect(bucket.startUtc).toMatch(BUCKET_START);
      const inBucket = logA.filter((w) => Date.parse(w.createdAtUtc) >= start && Date.parse(w.createdAtUtc) < start + MINUTE);
      const succeeded = inBucket.filter((w) => w.status === 'succeeded');
      expect({ ...bucket, p50Ms: undefined, p99Ms: undefined }).toEqual({
        startUtc: bucket.startUtc,
        succeeded: succeeded.length,
        failed: inBucket.filter((w) => w.status === 'failed').length,
        retried: inBucket.filter((w) => w.attemptCount > 1).length,
        p50Ms: undefined,
        p99Ms: undefined,
      });
      if (succeeded.length === 0) {
        expect([bucket.p50Ms, bucket.p99Ms]).toEqual([null, null]);
        return;
      }
      const values = succeeded.map((w) => latencyOf.get(w.id)!);
      expect(Number.isInteger(bucket.p50Ms)).toBe(true);
      expect(Number.isInteger(bucket.p99Ms)).toBe(true);
      // PostgreSQL rounds halves to even, JavaScript up: at most one millisecond apart.
      expect(Math.abs(bucket.p50Ms! - percentileCont(values, 0.5))).toBeLessThanOrEqual(1);
      expect(Math.abs(bucket.p99Ms! - percentileCont(values, 0.99))).toBeLessThanOrEqual(1);
      expect(bucket.p50Ms!).toBeLessThanOrEqual(bucket.p99Ms!);
    });

    // The two leading minutes are empty: present, with zeros and no latency.
    for (const empty of buckets.slice(0, 2)) {
      expect(empty).toEqual({ startUtc: empty.startUtc, succeeded: 0, failed: 0, retried: 0, p50Ms: null, p99Ms: null });
    }
    const totals = buckets.reduce(
      (sum, x) => ({ succeeded: sum.succeeded + x.succeeded, failed: sum.failed + x.failed, retried: sum.retried + x.retried }),
      {
        succeeded: 0,
        failed: 0,
        retried: 0,
      },
    );
    // Only this organization's webhooks: 5 succeeded (2 after a retry), 2 failed after 3 attempts.
    expect(totals).toEqual({ succeeded: 5, failed: 2, retried: 4 });
  });

  it('defaults to hourly buckets over the last 24 hours, every hour present', async () => {
    const before = Date.now();
    const { body } = await stats(a).expect(200);
    const after = Date.now();
    const buckets: Bucket[] = body.buckets;
    // 24 hours cut at an arbitrary instant touch 25 hours (24 when the instant is on the hour).
    expect([24, 25]).toContain(buckets.length);
    buckets.forEach((bucket, i) => {
      expect(bucket.startUtc).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000000\+00:00$/);
      if (i > 0) expect(Date.parse(bucket.startUtc) - Date.parse(buckets[i - 1].startUtc)).toBe(3_600_000);
    });
    // The first bucket holds the instant 24 hours before the request, the last the request itself.
    expect(Date.parse(buckets[0].startUtc)).toBeLessThanOrEqual(after - 24 * 3_600_000);
    expect(Date.parse(buckets[0].startUtc)).toBeGreaterThan(before - 25 * 3_600_000);
    expect(Date.parse(buckets[buckets.length - 1].startUtc)).toBeLessThanOrEqual(after);
    expect(Date.parse(buckets[buckets.length - 1].startUtc)).toBeGreaterThan(before - 3_600_000);
    expect(buckets.reduce((n, x) => n + x.succeeded, 0)).toBe(5);
    expect(buckets.reduce((n, x) => n + x.failed, 0)).toBe(2);
    expect(buckets.reduce((n, x) => n + x.retried, 0)).toBe(4);
    for (const bucket of buckets) {
      if (bucket.succeeded > 0) expect(bucket.p99Ms).toEqual(expect.any(Number));
      else
        expect(bucket).toEqual({
          startUtc: bucket.startUtc,
          succeeded: 0,
          failed: bucket.failed,
          retried: bucket.retried,
          p50Ms: null,
          p99Ms: null,
        });
    }
  });

  it("never counts another organization's webhooks, and counts its own for it", async () => {
    expect(sum((await stats(b, { bucket: '1m' }).expect(200)).body.buckets)).toEqual({ succeeded: 2, failed: 1, retried: 1 });
    expect(sum((await stats(a, { bucket: '1m' }).expect(200)).body.buckets)).toEqual({ succeeded: 5, failed: 2, retried: 4 });
    // An organization without webhooks sees every bucket empty.
    const empty = await createOrganization(t);
    const buckets: Bucket[] = (await stats(empty).expect(200)).body.buckets;
    expect(buckets.every((x) => x.succeeded + x.failed + x.retried === 0 && x.p50Ms === null && x.p99Ms === null)).toBe(true);
  });

  it('narrows to one endpoint with endpointId (the default endpoint has the organization id)', async () => {
    const all = (await stats(a).expect(200)).body;
    expect((await stats(a, { endpointId: a.id }).expect(200)).body).toEqual(all);
    expect((await stats(a, { endpointId: a.id.toUpperCase() }).expect(200)).body).toEqual(all);
    const other: Bucket[] = (await stats(a, { endpointId: UNKNOWN_ID }).expect(200)).body.buckets;
    expect(other).toHaveLength(all.buckets.length);
    expect(other.every((x) => x.succeeded + x.failed + x.retried === 0 && x.p50Ms === null)).toBe(true);
    // Another organization's endpoint shows nothing of it either.
    expect((await stats(a, { endpointId: b.id }).expect(200)).body.buckets.every((x: Bucket) => x.succeeded + x.failed === 0)).toBe(true);
  });

  it('splits an event fanned out to two endpoints by endpoint', async () => {
    const c = await createOrganization(t);
    await configureWebhooks(t, c, { url: receiver.url, sharedSecret: SECRET });
    const extra = await t
      .http()
      .post(ENDPOINTS_PATH)
      .set(bearer(c.adminKey))
      .send({ url: receiver.urlFor('/extra'), sharedSecret: `${SECRET}-extra`, webhookTypes: ['custodialAccount'] })
      .expect(201);
    const api = nftApi(t, c.adminKey);
    await api.wallet({ name: 'c1' });
    await api.wallet({ name: 'c2' });
    await api.token();
    // Default endpoint: 2 wallets succeeded, 1 token failed; the extra endpoint: the 2 wallets only.
    const log = await settledLog(c, 5);
    expect(log.filter((w) => w.endpointId === extra.body.id).map((w) => `${w.resourceType} ${w.status}`)).toEqual([
      'Wallet succeeded',
      'Wallet succeeded',
    ]);
    const totals = async (query: Record<string, string>) => sum((await stats(c, { bucket: '1m', ...query }).expect(200)).body.buckets);
    expect(await totals({})).toEqual({ succeeded: 4, failed: 1, retried: 1 });
    expect(await totals({ endpointId: c.id })).toEqual({ succeeded: 2, failed: 1, retried: 1 });
    expect(await totals({ endpointId: extra.body.id })).toEqual({ succeeded: 2, failed: 0, retried: 0 });
  });

  it('refuses what it cannot answer with 400 problem details naming the field', async () => {
    const cases: [Record<string, string | string[]>, string][] = [
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-11-22T01:00:00' }, 'since'],
      [{ until: '2026-11-22' }, 'until'],
      [{ since: '2026-02-30T00:00:00+00:00', until: '2026-03-01T00:00:00+00:00' }, 'since'],
      [{ since: '2026-11-22T01:00:00+00:00', until: '2026-11-22T01:00:00+00:00' }, 'until'],
      [{ since: '2026-11-22T02:00:00+00:00', until: '2026-11-22T01:00:00+00:00' }, 'until'],
      [{ bucket: '5m' }, 'bucket'],
      [{ bucket: '1m', since: '2026-11-20T00:00:00+00:00', until: '2026-11-22T00:00:00+00:00' }, 'bucket'],
      [{ endpointId: 'not-a-uuid' }, 'endpointId'],
      [{ since: ['2026-11-22T01:00:00+00:00', '2026-11-22T02:00:00+00:00'] }, 'since'],
      [{ status: 'failed' }, 'status'],
    ];
    for (const [query, field] of cases) {
      const res = await stats(a, query as Record<string, string>);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect([query, [...new Set(res.body.errors.map((e: { field: string }) => e.field))]]).toEqual([query, [field]]);
    }
    // Exactly at the limit is answered: 1,500 minutes.
    const limit = await stats(a, { bucket: '1m', since: '2026-11-22T00:00:00+00:00', until: '2026-11-23T01:00:00+00:00' }).expect(200);
    expect(limit.body.buckets).toHaveLength(1500);
  });

  it('is open to auditors and closed to keys without the admin or auditor role', async () => {
    const auditor = await createApiKey(t, a.id, ['auditor']);
    const auditorView = await stats(auditor.key, { bucket: '1m' }).expect(200);
    expect(auditorView.body.buckets.reduce((n: number, x: Bucket) => n + x.succeeded, 0)).toBe(5);
    for (const roles of [['read'], ['write'], ['read', 'write']] as const) {
      const key = await createApiKey(t, a.id, [...roles]);
      expectProblem(await stats(key.key), 403, 'FORBIDDEN');
    }
    expectProblem(await t.http().get(STATS_PATH), 401, 'UNAUTHENTICATED');
  });

  it('leaves GET …/webhooks/{webhookId} as it was beside it', async () => {
    const res = await t.http().get(`${WEBHOOKS_PATH}/${logA[0].id}`).set(bearer(a.adminKey)).expect(200);
    expect(res.body.id).toBe(logA[0].id);
    expectProblem(await t.http().get(`${WEBHOOKS_PATH}/statistics`).set(bearer(a.adminKey)), 400, 'INVALID_PATH_PARAMETER');
  });
});
