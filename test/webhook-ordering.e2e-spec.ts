import type { ChildProcess } from 'node:child_process';
import { startWorker } from './support/service-process';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, testEnv, TestApp } from './support/test-app';
import { WEBHOOKS_PATH } from './support/webhooks';
import { insertUpdates } from './support/nft';

const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';
const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];
const SEQUENCE = 'x-service-webhook-sequence';
/** Short enough to keep the suite quick; long enough that 30% failures practically never exhaust it. */
const RETRY_SCHEDULE = Array.from({ length: 12 }, () => '200ms').join(',');
let prefixCounter = 0;
const uniquePrefix = () => `to${process.env.TEST_RUN_ID}n${(prefixCounter += 1)}`;

/** A receiver answering 500 to about 30% of requests, remembering what it answered to each. */
function flakyReceiver(receiver: TestReceiver, answered: Map<ReceivedWebhook, number>, failPaths: (path: string) => boolean): void {
  receiver.behaviour = (_n, webhook) => {
    const status = failPaths(webhook.path) && Math.random() < 0.3 ? 500 : 200;
    answered.set(webhook, status);
    return { status };
  };
}

async function addEndpoint(t: TestApp, org: TestOrganization, url: string, ordering?: string): Promise<string> {
  const res = await t
    .http()
    .post(ENDPOINTS_PATH)
    .set(bearer(org.adminKey))
    .send({ url, sharedSecret: `ordering-secret-${randomUUID()}`, webhookTypes: ALL_TYPES, ...(ordering ? { ordering } : {}) })
    .expect(201);
  return res.body.id as string;
}

async function succeededCount(t: TestApp, org: TestOrganization, endpointId: string): Promise<number> {
  const res = await t
    .http()
    .get(`${WEBHOOKS_PATH}?status=succeeded&endpointId=${endpointId}&pageSize=1000`)
    .set(bearer(org.adminKey))
    .expect(200);
  return (res.body.webhooks as unknown[]).length;
}

/**
 * What an ordered endpoint's receiver saw of each resource, in arrival order: every webhook
 * numbered, its number its event's step (event order), and each one either the next number after
 * the last one answered 2xx or that last one again (a resend: at-least-once delivery sends a
 * webhook again when its answer did not count, see `resendsAreExplained`). Returns how many of
 * each resource were answered 2xx, and the resends with the receipt each one repeats.
 */
function checkOrder(
  received: ReceivedWebhook[],
  answered: Map<ReceivedWebhook, number>,
): { done: Map<string, number>; resends: { resend: ReceivedWebhook; of: ReceivedWebhook }[] } {
  const done = new Map<string, { sequence: number; webhook: ReceivedWebhook }>();
  const resends: { resend: ReceivedWebhook; of: ReceivedWebhook }[] = [];
  for (const webhook of received) {
    const resource = String(webhook.body.resourceId);
    const sequence = Number(webhook.headers[SEQUENCE]);
    expect(sequence).toBe((webhook.body.changes as { step: number }).step);
    const last = done.get(resource);
    if (last && sequence === last.sequence) {
      expect(webhook.body.id).toBe(last.webhook.body.id);
      resends.push({ resend: webhook, of: last.webhook });
      continue;
    }
    expect({ resource, sequence }).toEqual({ resource, sequence: (last?.sequence ?? 0) + 1 });
    if (answered.get(webhook) === 200) done.set(resource, { sequence, webhook });
  }
  return { done: new Map([...done].map(([resource, { sequence }]) => [resource, sequence])), resends };
}

/**
 * A webhook answered 2xx and then sent again is a duplicate the service owes an explanation for:
 * its log must show that attempt without the 2xx (the answer came too late, or the worker was
 * killed before recording it). A 2xx the service recorded and still sent again would be a bug.
 */
async function resendsAreExplained(t: TestApp, org: TestOrganization, resends: { resend: ReceivedWebhook; of: ReceivedWebhook }[]) {
  for (const { of } of resends) {
    const log = await t
      .http()
      .get(`${WEBHOOKS_PATH}/${String(of.body.id)}`)
      .set(bearer(org.adminKey))
      .expect(200);
    const attempt = (log.body.attempts as { attempt: number; responseStatus: number | null }[]).find(
      (a) => a.attempt === Number(of.headers['x-service-webhook-attempt']),
    );
    expect(attempt?.responseStatus).not.toBe(200);
  }
}

describe('ordered delivery per resource', () => {
  let receiver: TestReceiver;
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  describe('one app', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ QUEUE_PREFIX: uniquePrefix(), WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE });
    });
    afterAll(async () => {
      await t.close();
    });

    it('takes ordering none or resource on POST and PATCH, shows it on GET, and refuses anything else naming the field', async () => {
      const org = await createOrganization(t);
      const plain = await addEndpoint(t, org, receiver.urlFor('/plain'));
      const get = (id: string) => t.http().get(`${ENDPOINTS_PATH}/${id}`).set(bearer(org.adminKey)).expect(200);
      expect((await get(plain)).body.ordering).toBe('none');

      const bad = await t
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({ url: receiver.urlFor('/bad'), webhookTypes: ALL_TYPES, ordering: 'sideways' })
        .expect(400);
      expect((bad.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['ordering']);

      const patched = await t
        .http()
        .patch(`${ENDPOINTS_PATH}/${plain}`)
        .set(bearer(org.adminKey))
        .send({ ordering: 'resource' })
        .expect(200);
      expect(patched.body.ordering).toBe('resource');
      expect((await get(plain)).body.ordering).toBe('resource');
      const refused = await t
        .http()
        .patch(`${ENDPOINTS_PATH}/${plain}`)
        .set(bearer(org.adminKey))
        .send({ ordering: 'sideways' })
        .expect(400);
      expect((refused.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['ordering']);
      expect((await get(plain)).body.ordering).toBe('resource');

      // The default endpoint takes it through its endpoint route too.
      const defaultEndpoint = await t
        .http()
        .patch(`${ENDPOINTS_PATH}/${org.id}`)
        .set(bearer(org.adminKey))
        .send({ ordering: 'resource' })
        .expect(200);
      expect(defaultEndpoint.body).toEqual(expect.objectContaining({ id: org.id, isDefault: true, ordering: 'resource' }));
      expect((await get(org.id)).body.ordering).toBe('resource');
      await t.http().patch(`${ENDPOINTS_PATH}/${org.id}`).set(bearer(org.adminKey)).send({ ordering: null }).expect(400);
    });

    it('500 updates of 10 resources to a flaky ordered endpoint arrive one at a time per resource, in event order, numbered without gaps; an unordered endpoint gets them unnumbered and not held back', async () => {
      const answered = new Map<ReceivedWebhook, number>();
      flakyReceiver(receiver, answered, () => true);
      const org = await createOrganization(t);
      const ordered = await addEndpoint(t, org, receiver.urlFor('/ordered'), 'resource');
      const unordered = await addEndpoint(t, org, receiver.urlFor('/unordered'));
      const resources = Array.from({ length: 10 }, () => randomUUID());
      await insertUpdates(t, org.id, resources, 50);

      await waitUntil(
        async () => [await succeededCount(t, org, ordered), await succeededCount(t, org, unordered)],
        ([a, b]) => a === 500 && b === 500,
        55_000,
      );
      const at = (path: string) => receiver.received.filter((w) => w.path === path);
      const { done, resends } = checkOrder(at('/ordered'), answered);
      await resendsAreExplained(t, org, resends);
      expect([...done.keys()].sort()).toEqual([...resources].sort());
      expect([...done.values()]).toEqual(resources.map(() => 50));

      // The delivery log shows each webhook's number; unordered ones have none.
      const log = await t.http().get(`${WEBHOOKS_PATH}?endpointId=${ordered}&pageSize=1000`).set(bearer(org.adminKey)).expect(200);
      const first = at('/ordered')[0];
      expect(log.body.webhooks.find((w: { id: string }) => w.id === first.body.id).sequence).toBe(Number(first.headers[SEQUENCE]));

      const plain = at('/unordered');
      expect(plain.every((w) => w.headers[SEQUENCE] === undefined)).toBe(true);
      expect(new Set(plain.filter((w) => answered.get(w) === 200).map((w) => w.body.id)).size).toBe(500);
      // Not held back: some webhook reached the unordered endpoint while an earlier one of its
      // resource had not yet been answered 2xx there.
      const answeredSteps = new Map<string, Set<number>>();
      let overtakes = 0;
      for (const w of plain) {
        const resource = String(w.body.resourceId);
        const step = (w.body.changes as { step: number }).step;
        const seen = answeredSteps.get(resource) ?? new Set<number>();
        for (let s = 1; s < step; s += 1) if (!seen.has(s)) overtakes += 1;
        if (answered.get(w) === 200) seen.add(step);
        answeredSteps.set(resource, seen);
      }
      expect(overtakes).toBeGreaterThan(0);
      const unorderedLog = await t.http().get(`${WEBHOOKS_PATH}?endpointId=${unordered}&pageSize=5`).set(bearer(org.adminKey)).expect(200);
      expect(unorderedLog.body.webhooks.every((w: { sequence: unknown }) => w.sequence === null)).toBe(true);
    }, 60_000);
  });

  it('keeps the order through a worker killed with SIGKILL mid-stream and restarted', async () => {
    const prefix = uniquePrefix();
    const api = await createTestApp({ ROLE: 'api', QUEUE_PREFIX: prefix });
    const workerEnv = testEnv({ QUEUE_PREFIX: prefix, WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE, WEBHOOK_JOB_LOCK: '1500ms' });
    let first: ChildProcess | null = null;
    let second: ChildProcess | null = null;
    try {
      const answered = new Map<ReceivedWebhook, number>();
      flakyReceiver(receiver, answered, () => true);
      const org = await createOrganization(api);
      const ordered = await addEndpoint(api, org, receiver.urlFor('/ordered'), 'resource');
      first = await startWorker(workerEnv);
      const resources = Array.from({ length: 10 }, () => randomUUID());
      await insertUpdates(api, org.id, resources, 20);
      await receiver.waitFor((r) => r.length >= 40, 30_000);
      first.kill('SIGKILL');
      await new Promise((r) => first!.once('exit', r));

      second = await startWorker(workerEnv);
      await waitUntil(
        () => succeededCount(api, org, ordered),
        (n) => n === 200,
        45_000,
      );
      const { done, resends } = checkOrder(receiver.received, answered);
      await resendsAreExplained(api, org, resends);
      expect([...done.values()]).toEqual(resources.map(() => 20));
    } finally {
      first?.kill('SIGKILL');
      second?.kill('SIGKILL');
      await api.close();
    }
  }, 120_000);

  it('keeps the order through Redis emptied (FLUSHDB) mid-stream', async () => {
    const redisUrl = 'redis://127.0.0.1:6379/7';
    const t = await createTestApp({ REDIS_URL: redisUrl, QUEUE_PREFIX: uniquePrefix(), WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE });
    const redis = new Redis(redisUrl);
    try {
      const answered = new Map<ReceivedWebhook, number>();
      flakyReceiver(receiver, answered, () => true);
      const org = await createOrganization(t);
      const ordered = await addEndpoint(t, org, receiver.urlFor('/ordered'), 'resource');
      const resources = Array.from({ length: 10 }, () => randomUUID());
      await insertUpdates(t, org.id, resources, 20);
      await receiver.waitFor((r) => r.length >= 40, 30_000);
      expect(await redis.flushdb()).toBe('OK');

      await waitUntil(
        () => succeededCount(t, org, ordered),
        (n) => n === 200,
        45_000,
      );
      const { done, resends } = checkOrder(receiver.received, answered);
      await resendsAreExplained(t, org, resends);
      expect([...done.values()]).toEqual(resources.map(() => 20));

      // A redelivery is the same webhook again: it keeps its number.
      const old = receiver.received.find((w) => (w.body.changes as { step: number }).step === 3)!;
      receiver.behaviour = () => ({ status: 200 });
      const before = receiver.received.length;
      await t
        .http()
        .post(`${WEBHOOKS_PATH}/${String(old.body.id)}/redeliver`)
        .set(bearer(org.adminKey))
        .expect(202);
      const [again] = (await receiver.waitFor((r) => r.length > before)).slice(before);
      expect(again.body.id).toBe(old.body.id);
      expect(again.headers[SEQUENCE]).toBe('3');
    } finally {
      redis.disconnect();
      await t.close();
    }
  }, 90_000);
});
