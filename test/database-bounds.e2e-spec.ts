import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { databaseName } from './support/database-admin';
import { queryRows } from '../src/database/raw-sql';
import { workerTransaction } from '../src/database/statement-bounds';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { createWallet } from './support/webhooks';

const run = promisify(execFile);
const STATEMENT_BOUND_MS = 2000;
const ACQUIRE_BOUND_MS = 1500;

interface Timed<T> {
  value: T;
  ms: number;
}

async function timed<T>(promise: PromiseLike<T>): Promise<Timed<T>> {
  const started = Date.now();
  const value = await promise;
  return { value, ms: Date.now() - started };
}

/**
 * Every API request's wait on PostgreSQL is bounded: a statement stuck behind a lock is cancelled
 * by the server after DB_STATEMENT_TIMEOUT, and a request that finds every pooled connection busy
 * gives up after DB_ACQUIRE_TIMEOUT. Both answer 503 with Retry-After instead of holding the client.
 */
describe('bounded waits on the database', () => {
  let t: TestApp;
  let org: TestOrganization;
  let walletId: string;
  let lockHolder: Client;
  /** Outside any transaction: pg_stat_activity is a snapshot frozen at its first read in one. */
  let observer: Client;

  /** How many of the app's connections are waiting on a lock this suite holds. */
  async function appConnectionsWaitingOnLock(): Promise<number> {
    const res = await observer.query(
      `select count(*)::int as waiting from pg_stat_activity
        where application_name = 'nft-wallet' and datname = $1 and wait_event_type = 'Lock'`,
      [databaseName(process.env.TEST_DATABASE_URL!)],
    );
    return res.rows[0].waiting;
  }

  beforeAll(async () => {
    t = await createTestApp({
      ROLE: 'api',
      DB_POOL_MAX: '3',
      DB_STATEMENT_TIMEOUT: `${STATEMENT_BOUND_MS}ms`,
      DB_ACQUIRE_TIMEOUT: `${ACQUIRE_BOUND_MS}ms`,
    });
    org = await createOrganization(t);
    walletId = await createWallet(t, org);
    lockHolder = new Client({ connectionString: process.env.TEST_DATABASE_URL, application_name: 'bounds-test' });
    await lockHolder.connect();
    observer = new Client({ connectionString: process.env.TEST_DATABASE_URL, application_name: 'bounds-test' });
    await observer.connect();
  });
  afterEach(async () => {
    // Whatever a test did, the next one starts with no lock held.
    await lockHolder.query('rollback').catch(() => undefined);
  });
  afterAll(async () => {
    await lockHolder.end();
    await observer.end();
    await t.close();
  });

  it('a read blocked by a lock answers 503 after the statement bound, and the next read succeeds', async () => {
    await lockHolder.query('begin');
    await lockHolder.query('lock table "wallet" in access exclusive mode');
    const { value: res, ms } = await timed(t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)));
    expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('1');
    expect(ms).toBeGreaterThanOrEqual(0.8 * STATEMENT_BOUND_MS);
    expect(ms).toBeLessThanOrEqual(STATEMENT_BOUND_MS + 2000);
    await lockHolder.query('rollback');

    const ok = await t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)).expect(200);
    expect(ok.body.id).toBe(walletId);
  });

  it('with every pooled connection held by locks, the next request answers 503 after the acquire bound', async () => {
    await lockHolder.query('begin');
    await lockHolder.query('lock table "wallet" in access exclusive mode');
    // Three requests take the pool's three connections and wait on the lock.
    const holders = Array.from({ length: 3 }, () =>
      t
        .http()
        .get(`/v1/wallets/${walletId}`)
        .set(bearer(org.adminKey))
        .then((r) => r),
    );
    await waitUntil(appConnectionsWaitingOnLock, (waiting) => waiting === 3, 10_000);

    const { value: res, ms } = await timed(t.http().get('/v1/wallets?pageSize=1').set(bearer(org.adminKey)));
    expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('1');
    expect(ms).toBeGreaterThanOrEqual(0.8 * ACQUIRE_BOUND_MS);
    expect(ms).toBeLessThanOrEqual(ACQUIRE_BOUND_MS + 2000);

    for (const held of await Promise.all(holders)) expectProblem(held, 503, 'SERVICE_UNAVAILABLE');
    await lockHolder.query('rollback');
    await t.http().get('/v1/wallets?pageSize=1').set(bearer(org.adminKey)).expect(200);
  });

  it('25 concurrent reads behind a lock all answer 503 within the statement bound plus 2 s', async () => {
    await lockHolder.query('begin');
    await lockHolder.query('lock table "wallet" in access exclusive mode');
    const answers = await Promise.all(
      Array.from({ length: 25 }, async () => {
        const { value: r, ms } = await timed(t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)));
        return { status: r.status, code: r.body.code, ms };
      }),
    );
    await lockHolder.query('rollback');
    expect(answers.map((a) => `${a.status} ${a.code}`)).toEqual(Array(25).fill('503 SERVICE_UNAVAILABLE'));
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThanOrEqual(STATEMENT_BOUND_MS + 2000);
    await t.http().get(`/v1/wallets/${walletId}`).set(bearer(org.adminKey)).expect(200);
  });

  it('bounds background work by the worker statement bound, in a process whose pool carries the API bound', async () => {
    const em = t.app.get(EntityManager);
    const worker = { db: { ...t.config.db, workerStatementTimeoutMs: 4 * STATEMENT_BOUND_MS } };
    const setting = `select current_setting('statement_timeout') as v`;
    expect(await em.fork().transactional((tx) => queryRows(tx, setting))).toEqual([{ v: `${STATEMENT_BOUND_MS / 1000}s` }]);
    expect(await workerTransaction(em, worker, (tx) => queryRows(tx, setting))).toEqual([{ v: `${(4 * STATEMENT_BOUND_MS) / 1000}s` }]);
    // Longer than the API's bound, within the worker's: it completes.
    await workerTransaction(em, worker, (tx) => queryRows(tx, 'select pg_sleep(?)', [(STATEMENT_BOUND_MS * 1.5) / 1000]));
  });
});

describe('start-up without its dependencies', () => {
  const main = (env: Record<string, string>) =>
    run(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--swc', 'src/main.ts'], {
      env: { ...process.env, NODE_ENV: 'test', PORT: '0', ...env },
      timeout: 60_000,
    });

  it('says in one line that PostgreSQL is unreachable, where, with the password hidden, and what to do', async () => {
    const failure = await main({ DATABASE_URL: 'postgresql://app:s3cret-pw@127.0.0.1:1/nft_wallet' }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    const lines = failure!.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^PostgreSQL is unreachable at postgresql:\/\/app:\*\*\*@127\.0\.0\.1:1\/nft_wallet \(ECONNREFUSED\)/);
    expect(lines[0]).toContain('README.md');
    expect(lines[0]).not.toContain('s3cret-pw');
  });

  it('says in one line that Redis is unreachable, where, with the password hidden, and what to do', async () => {
    const failure = await main({
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      DB_MIGRATE_ON_START: 'false',
      REDIS_URL: 'redis://:r3dis-pw@127.0.0.1:1',
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    const lines = failure!.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Redis is unreachable at redis:\/\/:\*\*\*@127\.0\.0\.1:1 \(ECONNREFUSED\)/);
    expect(lines[0]).toContain('README.md');
    expect(lines[0]).not.toContain('r3dis-pw');
  });
});
