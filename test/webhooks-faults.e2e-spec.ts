import type { ChildProcess } from 'node:child_process';
import { startWorker } from './support/service-process';
import { MikroORM } from '@mikro-orm/postgresql';
import Redis from 'ioredis';
import { bearer, createOrganization } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, testEnv, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { LEGACY_DELIVER_JOB, relayJobId, WEBHOOK_BULK_QUEUE, WEBHOOK_QUEUE } from '../src/modules/webhooks/engine/webhook-jobs';
import { uuid7Sql } from './support/nft';

const SECRET = 'fault-drill-shared-secret';
let prefixCounter = 0;
const uniquePrefix = () => `tf${process.env.TEST_RUN_ID}n${(prefixCounter += 1)}`;

describe('webhook delivery under faults', () => {
  let receiver: TestReceiver;
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  it('delivers everything pending after Redis is emptied (FLUSHDB)', async () => {
    const redisUrl = 'redis://127.0.0.1:6379/7';
    const t = await createTestApp({ REDIS_URL: redisUrl, QUEUE_PREFIX: uniquePrefix(), WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' });
    const redis = new Redis(redisUrl);
    try {
      receiver.behaviour = () => ({ status: 500 });
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const wallets = await Promise.all(Array.from({ length: 10 }, (_, i) => createWallet(t, org, `w${i}`)));
      await receiver.waitFor((r) => new Set(r.map((w) => w.body.resourceId)).size === 10);

      // Every webhook now waits for its retry in Redis; lose all of that.
      // The running app writes to Redis again within milliseconds (locks, the retries it
      // re-enqueues), so the flush's own answer is what shows everything was dropped.
      expect(await redis.flushdb()).toBe('OK');
      receiver.behaviour = () => ({ status: 200 });
      const more = await Promise.all(Array.from({ length: 5 }, (_, i) => createWallet(t, org, `after${i}`)));

      const delivered = () =>
        new Set(
          receiver.received
            .filter((_, i) => i >= 0)
            .filter((w) => w.headers['x-service-webhook-attempt'] !== undefined)
            .map((w) => w.body.resourceId),
        );
      await waitUntil(
        () => t.http().get(`${WEBHOOKS_PATH}?status=succeeded`).set(bearer(org.adminKey)),
        (res) => res.body.webhooks.length === 15,
        30_000,
      );
      expect([...delivered()].sort()).toEqual([...wallets, ...more].sort());
      expect(receiver.received.every((w) => signatureIsValid(w, SECRET))).toBe(true);
    } finally {
      redis.disconnect();
      await t.close();
    }
  });

  it('a job fragment left in both lanes by a failure recorded after Redis was emptied does not block the webhook', async () => {
    const prefix = uniquePrefix();
    const api = await createTestApp({ ROLE: 'api', QUEUE_PREFIX: prefix });
    const redis = new Redis('redis://127.0.0.1:6379');
    let worker: TestApp | null = null;
    try {
      const org = await createOrganization(api);
      await configureWebhooks(api, org, { url: receiver.url, sharedSecret: SECRET });
      // No worker runs: the event is committed and waits in the outbox.
      const walletId = await createWallet(api, org, 'behind a fragment');
      const event = await api.app
        .get(MikroORM)
        .em.getConnection()
        .execute<{ id: string }[]>('select id from domain_event where resource_id = ?', [walletId]);
      const eventId = event[0].id;
      // As if a worker had relayed it before Redis was emptied: its job is gone, so only recovery
      // (which re-adds the event's job under its id) can bring it back.
      await api.app.get(MikroORM).em.getConnection().execute('update domain_event set relayed_at = now() where id = ?', [eventId]);

      // Redis emptied of this deployment's keys, then what Bull writes back when an in-flight
      // job fails after the flush: part of the job hash, in no list.
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      for (const queue of [WEBHOOK_QUEUE, WEBHOOK_BULK_QUEUE]) {
        await redis.hset(`${prefix}:${queue}:${relayJobId([eventId])}`, {
          failedReason: 'receiver has its maximum of webhooks in flight',
          stacktrace: '[]',
          attemptsMade: '1',
          processedOn: String(Date.now()),
        });
      }

      worker = await createTestApp({ ROLE: 'worker', QUEUE_PREFIX: prefix });
      const [delivered] = await receiver.waitFor((r) => r.length === 1, 30_000);
      expect(delivered.body).toEqual(expect.objectContaining({ id: eventId, resourceId: walletId }));
      expect(signatureIsValid(delivered, SECRET)).toBe(true);
      for (const queue of [WEBHOOK_QUEUE, WEBHOOK_BULK_QUEUE]) {
        expect(await redis.hget(`${prefix}:${queue}:${relayJobId([eventId])}`, 'failedReason')).toBeNull();
      }
    } finally {
      redis.disconnect();
      await worker?.close();
      await api.close();
    }
  });

  it('carries out deliver jobs an earlier release left in Redis, for an event and for a webhook, each once', async () => {
    const prefix = uniquePrefix();
    const api = await createTestApp({ ROLE: 'api', QUEUE_PREFIX: prefix });
    let worker: TestApp | null = null;
    try {
      const org = await createOrganization(api);
      await configureWebhooks(api, org, { url: receiver.url, sharedSecret: SECRET });
      const walletId = await createWallet(api, org, 'queued by the previous release');
      const [{ id: eventId }] = await api.app
        .get(MikroORM)
        .em.getConnection()
        .execute<{ id: string }[]>('select id from domain_event where resource_id = ?', [walletId]);
      // As the previous release relayed it: one job named `deliver` whose payload lists the event.
      await api.app.get(MikroORM).em.getConnection().execute('update domain_event set relayed_at = now() where id = ?', [eventId]);
      const queue = api.app.get<Queue>(getQueueToken(WEBHOOK_QUEUE));
      await queue.add(LEGACY_DELIVER_JOB, { eventIds: [eventId] }, { jobId: `legacy-event-${eventId}`, attempts: 100_000 });

      // Recovery looks only at work older than its interval: here nothing but these jobs can send.
      worker = await createTestApp({ ROLE: 'worker', QUEUE_PREFIX: prefix, WEBHOOK_RECONCILE_INTERVAL: '10m' });
      const [delivered] = await receiver.waitFor((r) => r.length === 1, 30_000);
      expect(delivered.body).toEqual(expect.objectContaining({ id: eventId, resourceId: walletId }));
      // Taken by a stage and done (a job no stage took would be delayed for its next try).
      await waitUntil(
        async () => (await queue.getJob(`legacy-event-${eventId}`))?.getState(),
        (state) => state === 'completed',
      );

      // A redelivery by the previous release: the webhook due again, and its job named `deliver`.
      await api.app
        .get(MikroORM)
        .em.getConnection()
        .execute(
          `update webhook_delivery set status = 'pending', cycle_start_attempt = attempt_count, next_attempt_at = now() where id = ?`,
          [eventId],
        );
      await queue.add(LEGACY_DELIVER_JOB, { webhookId: eventId }, { jobId: `legacy-webhook-${eventId}`, attempts: 100_000 });
      const [, again] = await receiver.waitFor((r) => r.length === 2, 30_000);
      expect(again.body).toEqual(delivered.body);
      expect(again.headers['x-service-webhook-attempt']).toBe('2');
      await waitUntil(
        async () => (await queue.getJob(`legacy-webhook-${eventId}`))?.getState(),
        (state) => state === 'completed',
      );
      const log = await waitUntil(
        () => api.http().get(`${WEBHOOKS_PATH}/${eventId}`).set(bearer(org.adminKey)),
        (res) => res.body.status === 'succeeded',
      );
      expect(log.body.attemptCount).toBe(2);
      expect(receiver.received).toHaveLength(2);
    } finally {
      await worker?.close();
      await api.close();
    }
  });

  it('ROLE=api sends nothing itself; two worker apps deliver every webhook exactly once', async () => {
    const prefix = uniquePrefix();
    const api = await createTestApp({ ROLE: 'api', QUEUE_PREFIX: prefix });
    const workers: TestApp[] = [];
    try {
      const org = await createOrganization(api);
      await configureWebhooks(api, org, { url: receiver.url, sharedSecret: SECRET });
      const first = await createWallet(api, org, 'before workers');
      await new Promise((r) => setTimeout(r, 700));
      expect(receiver.received).toHaveLength(0);

      workers.push(await createTestApp({ ROLE: 'worker', QUEUE_PREFIX: prefix }));
      workers.push(await createTestApp({ ROLE: 'worker', QUEUE_PREFIX: prefix }));
      const ids = [first, ...(await Promise.all(Array.from({ length: 60 }, (_, i) => createWallet(api, org, `w${i}`))))];
      await receiver.waitFor((r) => new Set(r.map((w) => w.body.resourceId)).size === ids.length, 30_000);
      // Give a duplicate the time to show up if there were one.
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.received).toHaveLength(ids.length);
      expect(new Set(receiver.received.map((w) => w.body.id)).size).toBe(ids.length);
      expect(receiver.received.every((w) => w.headers['x-service-webhook-attempt'] === '1')).toBe(true);
    } finally {
      for (const worker of workers) await worker.close();
      await api.close();
    }
  });

  it('a slow receiver does not hold up another organization', async () => {
    const t = await createTestApp({ QUEUE_PREFIX: uniquePrefix(), WEBHOOK_PER_RECEIVER_CONCURRENCY: '2', WEBHOOK_CONCURRENCY: '8' });
    const fast = await new TestReceiver().start();
    try {
      receiver.behaviour = () => ({ status: 200, delayMs: 600 });
      const slowOrg = await createOrganization(t);
      const fastOrg = await createOrganization(t);
      await configureWebhooks(t, slowOrg, { url: receiver.url, sharedSecret: SECRET });
      await configureWebhooks(t, fastOrg, { url: fast.url, sharedSecret: SECRET });
      await Promise.all(Array.from({ length: 20 }, (_, i) => createWallet(t, slowOrg, `slow${i}`)));
      await createWallet(t, fastOrg, 'fast');
      await fast.waitFor((r) => r.length === 1);
      // 20 webhooks at 2 in flight and 600 ms each take about 6 s; the other organization's
      // webhook went out long before that backlog cleared.
      expect(receiver.received.length).toBeLessThan(15);
      await receiver.waitFor((r) => r.length === 20, 30_000);
    } finally {
      await fast.stop();
      await t.close();
    }
  });

  it("a burst from one organization does not queue ahead of another organization's webhooks", async () => {
    const t = await createTestApp({ QUEUE_PREFIX: uniquePrefix(), WEBHOOK_CONCURRENCY: '2', WEBHOOK_PER_RECEIVER_CONCURRENCY: '10' });
    const quiet = await new TestReceiver().start();
    try {
      receiver.behaviour = () => ({ status: 200, delayMs: 20 });
      const busy = await createOrganization(t);
      const other = await createOrganization(t);
      await configureWebhooks(t, busy, { url: receiver.url, sharedSecret: SECRET });
      await configureWebhooks(t, other, { url: quiet.url, sharedSecret: SECRET });
      // 1,000 changes committed at once by one organization (as a bulk import would).
      await t.app
        .get(MikroORM)
        .em.getConnection()
        .execute(
          `insert into domain_event (id, created_at, organization_id, webhook_type, resource_type, resource_id, action, changes)
           select ${uuid7Sql()}, clock_timestamp(), ?, 'custodialAccount', 'Wallet', gen_random_uuid(), 'create', null
             from generate_series(1, 1000)`,
          [busy.id],
        );
      await receiver.waitFor((r) => r.length >= 1);
      await createWallet(t, other, 'one change');
      await quiet.waitFor((r) => r.length === 1, 30_000);
      // In one queue it would have waited for all 1,000; in its own lane it passes most of them.
      expect(receiver.received.length).toBeLessThan(900);
      await receiver.waitFor((r) => r.length === 1000, 60_000);
    } finally {
      await quiet.stop();
      await t.close();
    }
  }, 90_000);

  it('a worker stopped with SIGTERM finishes the delivery in flight', async () => {
    const prefix = uniquePrefix();
    const api = await createTestApp({ ROLE: 'api', QUEUE_PREFIX: prefix });
    const worker = await createTestApp({ ROLE: 'worker', QUEUE_PREFIX: prefix });
    try {
      receiver.behaviour = () => ({ status: 200, delayMs: 700 });
      const org = await createOrganization(api);
      await configureWebhooks(api, org, { url: receiver.url, sharedSecret: SECRET });
      await createWallet(api, org);
      await receiver.waitFor((r) => r.length === 1);
      await worker.close(); // what SIGTERM triggers (enableShutdownHooks)
      const log = await api.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)).expect(200);
      expect(log.body.webhooks[0]).toEqual(expect.objectContaining({ status: 'succeeded', attemptCount: 1 }));
    } finally {
      await api.close();
    }
  });

  it('a worker process killed with SIGKILL mid-delivery: delivered after restart with the same id', async () => {
    const prefix = uniquePrefix();
    const api = await createTestApp({ ROLE: 'api', QUEUE_PREFIX: prefix });
    const workerEnv = { ...testEnv({ QUEUE_PREFIX: prefix, WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_JOB_LOCK: '1500ms', LOG_LEVEL: 'info' }) };
    let first: ChildProcess | null = null;
    let second: ChildProcess | null = null;
    try {
      receiver.behaviour = (n) => (n === 1 ? 'hang' : { status: 200 });
      const org = await createOrganization(api);
      await configureWebhooks(api, org, { url: receiver.url, sharedSecret: SECRET });
      first = await startWorker(workerEnv);
      const walletId = await createWallet(api, org);
      const [hung] = await receiver.waitFor((r) => r.length === 1, 30_000);
      // The attempt's row is written only with its result; until then the log shows it under way.
      const during = await api
        .http()
        .get(`${WEBHOOKS_PATH}/${String(hung.body.id)}`)
        .set(bearer(org.adminKey));
      expect(during.body.attemptCount).toBe(1);
      expect(during.body.attempts).toEqual([
        expect.objectContaining({ attempt: 1, responseStatus: null, error: expect.stringMatching(/in flight/) }),
      ]);
      first.kill('SIGKILL');
      await new Promise((r) => first!.once('exit', r));

      second = await startWorker(workerEnv);
      const received = await receiver.waitFor((r) => r.length === 2, 45_000);
      expect(received[1].body.id).toBe(received[0].body.id);
      expect(received[1].body.resourceId).toBe(walletId);
      expect(received[1].raw.equals(received[0].raw)).toBe(true);
      expect(received[1].headers['x-service-webhook-attempt']).toBe('2');
      const detail = await waitUntil(
        () =>
          api
            .http()
            .get(`${WEBHOOKS_PATH}/${String(received[0].body.id)}`)
            .set(bearer(org.adminKey)),
        (res) => res.body.status === 'succeeded',
      );
      expect(detail.body.attempts).toHaveLength(2);
      expect(detail.body.attempts[0].error).toMatch(/worker stopped/);
      expect(detail.body.attempts[0].startedAtUtc).toBe(during.body.attempts[0].startedAtUtc);
      expect(detail.body.attempts[1].responseStatus).toBe(200);
    } finally {
      first?.kill('SIGKILL');
      if (second) {
        second.kill('SIGTERM');
        await new Promise((r) => second!.once('exit', r));
      }
      await api.close();
    }
  }, 120_000);
});
