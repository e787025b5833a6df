import { Client } from 'pg';
import { databaseName } from './support/database-admin';
import { bearer, createOrganization, expectProblem } from './support/factories';
import { TestPgBouncer } from './support/pgbouncer';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, deliveryLog, idsByResource, signatureIsValid } from './support/webhooks';

const SECRET = 'pgbouncer-shared-secret-0001';
const STATEMENT_BOUND = '1500ms';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The service behind a PgBouncer in transaction pooling mode with PgBouncer's default
 * ignore_startup_parameters: DATABASE_URL goes through the pooler, DATABASE_DIRECT_URL (when set)
 * straight to PostgreSQL for LISTEN and session locks.
 */
describe('behind PgBouncer in transaction pooling mode', () => {
  let bouncer: TestPgBouncer;
  let receiver: TestReceiver;
  const direct = () => process.env.TEST_DATABASE_URL!;
  const pooled = () => bouncer.urlFor(direct());
  /** Every app of the suite: Nest's framework loggers are process-wide, so a line may sit in any app's capture. */
  const apps: TestApp[] = [];
  const start = async (overrides: Record<string, string | undefined>) => {
    const t = await createTestApp({ DATABASE_URL: pooled(), ...overrides });
    apps.push(t);
    return t;
  };
  /** Log lines naming DATABASE_DIRECT_URL (the warning that notifications never arrive), from any app. */
  const directUrlWarnings = () => apps.flatMap((t) => t.logs).filter((line) => line.includes('DATABASE_DIRECT_URL'));

  beforeAll(async () => {
    bouncer = await TestPgBouncer.start();
  });
  afterAll(async () => {
    await bouncer?.stop();
  });
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  it('is a pooler that refuses a statement_timeout start-up parameter (what the service must not send)', async () => {
    const client = new Client({ connectionString: pooled(), statement_timeout: 1000 });
    client.on('error', () => undefined);
    await expect(client.connect()).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
    await client.end().catch(() => undefined);
  });

  it('creates wallets and delivers their webhooks, the relay woken by LISTEN over DATABASE_DIRECT_URL', async () => {
    // No poll and no reconcile pass within the test: only a notification can wake the relay.
    const t = await start({ DATABASE_DIRECT_URL: direct(), OUTBOX_POLL_INTERVAL: '1h', WEBHOOK_RECONCILE_INTERVAL: '1h' });
    try {
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const wallets: string[] = [];
      for (let i = 0; i < 5; i += 1) wallets.push(await createWallet(t, org, `pooled ${i}`));

      await receiver.waitFor((r) => wallets.every((id) => idsByResource(r).has(id)));
      const byResource = idsByResource(receiver.received);
      for (const id of wallets) expect(byResource.get(id)!.size).toBe(1);
      expect(receiver.received.every((w) => signatureIsValid(w, SECRET))).toBe(true);
      await waitUntil(
        () => deliveryLog(t, org),
        (log) => log.length === wallets.length && log.every((w) => w.status === 'succeeded'),
      );
      expect(directUrlWarnings()).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('bounds statements through the pooler: a request blocked by a lock is cancelled on the server and answers 503', async () => {
    const t = await start({
      ROLE: 'api',
      DATABASE_DIRECT_URL: direct(),
      DB_STATEMENT_TIMEOUT: STATEMENT_BOUND,
    });
    const lockHolder = new Client({ connectionString: direct(), application_name: 'pgbouncer-test' });
    const observer = new Client({ connectionString: direct(), application_name: 'pgbouncer-test' });
    await lockHolder.connect();
    await observer.connect();
    /** Server sessions of this database waiting on a lock, the lock holder's own excepted. */
    const waitingOnLock = async () =>
      (
        await observer.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
            where datname = $1 and wait_event_type = 'Lock' and application_name <> 'pgbouncer-test'`,
          [databaseName(direct())],
        )
      ).rows[0].n;
    try {
      const org = await createOrganization(t);
      const walletId = await createWallet(t, org);

      await lockHolder.query('begin');
      await lockHolder.query('lock table "wallet" in access exclusive mode');
      // A read outside any transaction, and a write in one: both carry the bound.
      const read = await t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey));
      expectProblem(read, 503, 'SERVICE_UNAVAILABLE');
      const write = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'blocked' });
      expectProblem(write, 503, 'SERVICE_UNAVAILABLE');
      // Cancelled by the server, not merely given up by the client: nothing waits on the lock.
      expect(await waitingOnLock()).toBe(0);
      await lockHolder.query('rollback');

      const ok = await t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)).expect(200);
      expect(ok.body.id).toBe(walletId);
      // The bound lived in the request's own transaction: the pooler's server sessions keep none.
      const expected = (await observer.query<{ statement_timeout: string }>('show statement_timeout')).rows[0].statement_timeout;
      const viaPooler = new Client({ connectionString: pooled() });
      await viaPooler.connect();
      try {
        for (let i = 0; i < 5; i += 1) {
          expect((await viaPooler.query<{ statement_timeout: string }>('show statement_timeout')).rows[0].statement_timeout).toBe(expected);
        }
      } finally {
        await viaPooler.end();
      }
    } finally {
      await lockHolder.query('rollback').catch(() => undefined);
      await lockHolder.end();
      await observer.end();
      await t.close();
    }
  });

  it('loses nothing when PgBouncer is killed and restarted mid-stream of writes: every wallet gets its webhook exactly once', async () => {
    const t = await start({ DATABASE_DIRECT_URL: direct() });
    // Writers stop when the test ends, whatever the outcome, so none outlives the app.
    let halted = false;
    let writers: Promise<void>[] = [];
    try {
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const written: string[] = [];
      let refused = 0;
      /** Writes one wallet as a client would: a 503 while the pooler is down is retried. */
      const write = async (name: string) => {
        while (!halted) {
          const res = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name });
          if (res.status === 201) return written.push(res.body.id as string);
          if (res.status !== 503) {
            // Anything but the outage's 503 fails the test, with what the app logged about it.
            const requestId = String(res.headers['x-request-id']);
            throw new Error(`POST /v1/wallets answered ${res.status}: ${t.logs.filter((line) => line.includes(requestId)).join('\n')}`);
          }
          expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
          refused += 1;
          await sleep(100);
        }
      };
      writers = [0, 1, 2].map(async (writer) => {
        for (let i = 0; i < 12 && !halted; i += 1) await write(`writer ${writer} wallet ${i}`);
      });
      await waitUntil(
        () => written.length,
        (n) => n >= 6,
      );
      await bouncer.kill();
      // Writes keep arriving while the pooler is down.
      const refusedBefore = refused;
      await waitUntil(
        () => refused,
        (n) => n > refusedBefore,
      );
      await bouncer.resume();
      await Promise.all(writers);

      expect(written).toHaveLength(36);
      await receiver.waitFor((r) => written.every((id) => idsByResource(r).has(id)), 60_000);
      const log = await waitUntil(
        () => deliveryLog(t, org),
        (webhooks) => webhooks.length >= written.length && webhooks.every((w) => w.status === 'succeeded'),
        60_000,
      );
      const byResource = idsByResource(receiver.received);
      for (const id of written) expect(byResource.get(id)!.size).toBe(1);
      // Counted at the receiver by webhook id: every webhook of the log arrived, none other.
      expect([...new Set(receiver.received.map((w) => String(w.body.id)))].sort()).toEqual(log.map((w) => w.id).sort());
    } finally {
      halted = true;
      if (!bouncer.running) await bouncer.resume();
      await Promise.allSettled(writers);
      await t.close();
    }
  });

  // Last: without a direct connection the maintenance locks go through the pooler too.
  it('without DATABASE_DIRECT_URL still delivers, by polling, and warns once naming DATABASE_DIRECT_URL', async () => {
    const t = await start({ DATABASE_DIRECT_URL: undefined });
    try {
      await waitUntil(
        () => directUrlWarnings(),
        (warnings) => warnings.length > 0,
        20_000,
      );
      const org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
      const wallets: string[] = [];
      for (let i = 0; i < 3; i += 1) wallets.push(await createWallet(t, org, `polled ${i}`));
      await receiver.waitFor((r) => wallets.every((id) => idsByResource(r).has(id)));
      const byResource = idsByResource(receiver.received);
      for (const id of wallets) expect(byResource.get(id)!.size).toBe(1);

      const warnings = directUrlWarnings();
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0])).toMatchObject({ level: 40 });
    } finally {
      await t.close();
    }
  });
});
