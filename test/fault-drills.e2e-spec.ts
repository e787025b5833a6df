import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { databaseName } from './support/database-admin';
import { WEBHOOK_QUEUE } from '../src/modules/webhooks/engine/webhook-jobs';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { sql } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import {
  CONFIG_PATH,
  configureWebhooks,
  createWallet,
  deliveryLog,
  idsByResource,
  signatureIsValid,
  WEBHOOKS_PATH,
} from './support/webhooks';

const SECRET = 'fault-drills-shared-secret-0001';
let prefixCounter = 0;
const uniquePrefix = () => `tfd${process.env.TEST_RUN_ID}n${(prefixCounter += 1)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL connections dropped mid-request', () => {
  let t: TestApp;
  let org: TestOrganization;
  let lockHolder: Client;
  /**
   * Watches pg_stat_activity from outside any transaction: read inside the lock holder's
   * transaction it would be a snapshot frozen at the first read, blind to the app's request
   * arriving at the lock later.
   */
  let observer: Client;
  /** Requests a drill started, settled in afterEach so no drill outlives its own test. */
  let inFlight: Promise<unknown>[] = [];
  const databaseUrl = () => process.env.TEST_DATABASE_URL!;

  /** Terminates every connection the app holds to the test database, as a failover would. */
  async function dropAppConnections(): Promise<number> {
    const res = await observer.query(
      `select pg_terminate_backend(pid) as dropped from pg_stat_activity
        where application_name = 'nft-wallet' and datname = $1 and pid <> pg_backend_pid()`,
      [databaseName(databaseUrl())],
    );
    return res.rowCount ?? 0;
  }

  /** Resolves once one of the app's connections is waiting on a lock this test holds. */
  async function appWaitingOnLock(): Promise<void> {
    await waitUntil(
      () =>
        observer.query(
          `select pid from pg_stat_activity
            where application_name = 'nft-wallet' and datname = $1 and wait_event_type = 'Lock'`,
          [databaseName(databaseUrl())],
        ),
      (res) => (res.rowCount ?? 0) > 0,
      20_000,
    );
  }

  /**
   * Either the request is now blocked on the test's lock, or it was already answered because a
   * pooled connection had died in an earlier drop: both are the fault this drill is about, and
   * both must answer 503.
   */
  async function waitingOrAnswered(pending: Promise<unknown>): Promise<'waiting' | 'answered'> {
    return Promise.race([appWaitingOnLock().then(() => 'waiting' as const), pending.then(() => 'answered' as const)]);
  }

  /**
   * The answer once the service is over the drop, in the same process: a connection the pool
   * handed out before it saw that connection's end answers 503 (as a client told Retry-After: 1
   * would see once more); anything else, or no recovery within 10 s, fails the drill.
   */
  async function recovered(send: () => PromiseLike<{ status: number; headers: Record<string, string>; body: any }>) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await send();
      if (res.status === 200 || Date.now() > deadline) return expectOk(res);
      expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  function expectOk<T extends { status: number; body: unknown }>(res: T): T {
    expect([res.status, res.body]).toEqual([200, expect.anything()]);
    return res;
  }

  function track<T>(request: PromiseLike<T>): Promise<T> {
    const pending = Promise.resolve(request);
    inFlight.push(pending.catch(() => undefined));
    return pending;
  }

  beforeAll(async () => {
    // A statement bound far beyond each drill's duration: these drills prove recovery from
    // dropped connections, not the bound (test/database-bounds covers that).
    t = await createTestApp({ DB_STATEMENT_TIMEOUT: '40s' });
    org = await createOrganization(t);
    lockHolder = new Client({ connectionString: databaseUrl(), application_name: 'fault-drill' });
    await lockHolder.connect();
    observer = new Client({ connectionString: databaseUrl(), application_name: 'fault-drill' });
    await observer.connect();
  });
  afterEach(async () => {
    await lockHolder.query('rollback').catch(() => undefined);
    await Promise.all(inFlight);
    inFlight = [];
  });
  afterAll(async () => {
    await lockHolder.end();
    await observer.end();
    await t.close();
  });

  it('a write in flight answers 503 with Retry-After, changes nothing, and the next write succeeds', async () => {
    await lockHolder.query('begin');
    await lockHolder.query('lock table "webhook_endpoint" in access exclusive mode');
    const pending = track(t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ sharedSecret: SECRET }));
    if ((await waitingOrAnswered(pending)) === 'waiting') expect(await dropAppConnections()).toBeGreaterThan(0);
    const res = await pending;
    expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('1');
    await lockHolder.query('rollback');
    // Same process, no restart: the pool replaces the dropped connections.
    const unchanged = await recovered(() => t.http().get(CONFIG_PATH).set(bearer(org.adminKey)));
    expect(unchanged.body.hasSharedSecret).toBe(false);
    const changed = await t.http().patch(CONFIG_PATH).set(bearer(org.adminKey)).send({ sharedSecret: SECRET }).expect(200);
    expect(changed.body.hasSharedSecret).toBe(true);
    await t.http().get('/health/ready').expect(200);
  });

  it('a read in flight answers 503, and the next read succeeds', async () => {
    const walletId = await createWallet(t, org);
    await lockHolder.query('begin');
    await lockHolder.query('lock table "wallet" in access exclusive mode');
    const pending = track(t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)));
    if ((await waitingOrAnswered(pending)) === 'waiting') expect(await dropAppConnections()).toBeGreaterThan(0);
    expectProblem(await pending, 503, 'SERVICE_UNAVAILABLE');
    await lockHolder.query('rollback');
    const res = await recovered(() => t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)));
    expect(res.body.id).toBe(walletId);
  });

  it('a burst of writes while connections keep dropping: each answer is 201 or 503, never 500', async () => {
    const dropped: number[] = [];
    const [answers] = await Promise.all([
      track(
        Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            t
              .http()
              .post('/v1/wallets')
              .set(bearer(org.adminKey))
              .send({ name: `burst ${i}` }),
          ),
        ),
      ),
      (async () => {
        for (let i = 0; i < 4; i += 1) {
          dropped.push(await dropAppConnections());
          await sleep(15);
        }
      })(),
    ]);
    expect(dropped.some((n) => n > 0)).toBe(true);
    expect(answers.map((r) => r.status).filter((s) => s !== 201 && s !== 503)).toEqual([]);
    // Nothing confirmed is lost.
    for (const created of answers.filter((r) => r.status === 201)) {
      await t.http().get(`/v1/wallets/${created.body.id}`).set(bearer(org.adminKey)).expect(200);
    }
    await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'after the burst' }).expect(201);
  });
});

/** A Redis server of this suite's own, on a free port, so stopping it touches nobody else. */
class OwnRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await waitUntil(
      () =>
        promisify(execFile)('redis-cli', ['-p', String(this.port), 'ping']).then(
          (r) => r.stdout.trim(),
          () => 'down',
        ),
      (answer) => answer === 'PONG',
      10_000,
    );
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    await promisify(execFile)('redis-cli', ['-p', String(this.port), 'shutdown', 'nosave']).catch(() => child.kill('SIGKILL'));
    await exited;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('webhook delivery under faults', () => {
  let receiver: TestReceiver;
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  it('Redis stopped and restarted empty: writes keep succeeding and every webhook arrives afterwards', async () => {
    const redis = new OwnRedis(await freePort());
    await redis.start();
    const t = await createTestApp({ REDIS_URL: redis.url, QUEUE_PREFIX: uniquePrefix() });
    try {
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const before = await createWallet(t, org, 'before the outage');
      await receiver.waitFor((r) => r.some((w) => w.body.resourceId === before));

      await redis.stop();
      const during: string[] = [];
      for (let i = 0; i < 5; i += 1) during.push(await createWallet(t, org, `during the outage ${i}`));
      const token = await t
        .http()
        .post('/v1/tokens')
        .set(bearer(org.adminKey))
        .send({ contractAddress: `0x${'ab'.repeat(20)}`, blockchainTokenId: '7' })
        .expect(201);
      await t.http().post('/v1/transactions').set(bearer(org.adminKey)).send({ tokenId: token.body.id, toWalletId: during[0] }).expect(201);
      const ready = await t.http().get('/health/ready');
      expectProblem(ready, 503, 'NOT_READY');
      expect(ready.body.detail).toContain('redis');

      await redis.start();
      const expected = [before, ...during, token.body.id];
      await receiver.waitFor((r) => expected.every((id) => idsByResource(r).has(id)) && r.length >= expected.length + 1, 30_000);
      const log = await waitUntil(
        () => deliveryLog(t, org),
        (webhooks) => webhooks.length === expected.length + 1 && webhooks.every((w) => w.status === 'succeeded'),
        30_000,
      );
      // Counted at the receiver by webhook id: every webhook of the log arrived, none twice.
      const receivedIds = new Set(receiver.received.map((w) => w.body.id));
      expect([...receivedIds].sort()).toEqual(log.map((w) => w.id).sort());
      expect(receiver.received.every((w) => signatureIsValid(w, SECRET))).toBe(true);
    } finally {
      await t.close();
      await redis.stop();
    }
  });

  it('a receiver that closes the connection, then answers garbage, gets every webhook on a later attempt', async () => {
    const t = await createTestApp({ QUEUE_PREFIX: uniquePrefix() });
    try {
      const attempts = new Map<string, number>();
      receiver.behaviour = (_, webhook) => {
        const n = (attempts.get(String(webhook.body.id)) ?? 0) + 1;
        attempts.set(String(webhook.body.id), n);
        return n === 1 ? 'destroy' : n === 2 ? 'garbage' : { status: 200 };
      };
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const wallets = await Promise.all([1, 2, 3].map((i) => createWallet(t, org, `w${i}`)));
      await receiver.waitFor((r) => r.length >= 9, 30_000);

      const log = await waitUntil(
        () => deliveryLog(t, org),
        (webhooks) => webhooks.length === 3 && webhooks.every((w) => w.status === 'succeeded'),
      );
      expect(log.map((w) => w.resourceId).sort()).toEqual([...wallets].sort());
      for (const webhook of log) {
        const copies = receiver.byId(webhook.id);
        expect(copies.map((w) => w.headers['x-service-webhook-attempt'])).toEqual(['1', '2', '3']);
        expect(copies.every((w) => w.raw.equals(copies[0].raw) && signatureIsValid(w, SECRET))).toBe(true);
        const detail = await t.http().get(`${WEBHOOKS_PATH}/${webhook.id}`).set(bearer(org.adminKey)).expect(200);
        expect(detail.body.attemptCount).toBe(3);
        expect(detail.body.attempts.map((a: { responseStatus: number | null }) => a.responseStatus)).toEqual([null, null, 200]);
        expect(detail.body.attempts[0].error).toEqual(expect.any(String));
        expect(detail.body.attempts[1].error).toEqual(expect.any(String));
      }
    } finally {
      await t.close();
    }
  });

  it('next attempts written by skewed clocks, far ahead or far behind, are still made promptly', async () => {
    // Retries 2 s apart leave time to rewrite a pending webhook before its next attempt.
    const t = await createTestApp({ QUEUE_PREFIX: uniquePrefix(), WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s' });
    try {
      receiver.behaviour = () => ({ status: 500 });
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const [ahead, aheadJobLost, behindJobLost] = await Promise.all(['a', 'b', 'c'].map((n) => createWallet(t, org, n)));
      const failedOnce = await waitUntil(
        () =>
          sql<{ id: string; resource_id: string }>(
            t,
            `select d.id, d.resource_id from webhook_delivery d join webhook_attempt a on a.delivery_id = d.id
              where d.organization_id = ? and a.attempt = 1 and a.response_status = 500 and d.status = 'pending'`,
            [org.id],
          ),
        (rows) => rows.length === 3,
      );
      const webhookOf = (resourceId: string) => failedOnce.find((row) => row.resource_id === resourceId)!.id;

      // As written by a host whose clock runs a year ahead, or a day behind.
      await sql(t, `update webhook_delivery set next_attempt_at = now() + interval '1 year' where id in (?, ?)`, [
        webhookOf(ahead),
        webhookOf(aheadJobLost),
      ]);
      await sql(t, `update webhook_delivery set next_attempt_at = now() - interval '1 day' where id = ?`, [webhookOf(behindJobLost)]);
      // And the queue lost the retry jobs of two of them, so only the reconciler can find them.
      const queue = t.app.get<Queue>(getQueueToken(WEBHOOK_QUEUE));
      for (const resourceId of [aheadJobLost, behindJobLost]) await (await queue.getJob(webhookOf(resourceId)))?.remove();
      receiver.behaviour = () => ({ status: 200 });

      await receiver.waitFor(
        (r) => [ahead, aheadJobLost, behindJobLost].every((id) => r.filter((w) => w.body.resourceId === id).length === 2),
        20_000,
      );
      const log = await waitUntil(
        () => deliveryLog(t, org),
        (webhooks) => webhooks.every((w) => w.status === 'succeeded'),
      );
      expect(log.map((w) => w.attemptCount)).toEqual([2, 2, 2]);
      const byResource = idsByResource(receiver.received);
      for (const id of [ahead, aheadJobLost, behindJobLost]) expect(byResource.get(id)!.size).toBe(1);
    } finally {
      await t.close();
    }
  });
});
