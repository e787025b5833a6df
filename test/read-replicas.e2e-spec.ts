import { MikroORM } from '@mikro-orm/postgresql';
import { loadConfig } from '../src/config/app-config';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { bearer, createApiKey, createOrganization, TestOrganization } from './support/factories';
import { PgCluster, sql } from './support/pg-cluster';
import { createTestApp, TestApp } from './support/test-app';

const WHITELIST = '/api/organization/v1/current-organization/nft-whitelist';

/** Statements naming `table` that a server ran since its last reset (pg_stat_statements). */
async function statementsOn(url: string, table: string): Promise<number> {
  const [row] = await sql<{ calls: number }>(
    url,
    `select coalesce(sum(calls), 0)::int as calls from pg_stat_statements where query ~* ('\\m' || $1 || '\\M')`,
    [table],
  );
  return row.calls;
}

const resetStatements = (url: string) => sql(url, 'select pg_stat_statements_reset()');

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('read replicas: GET requests read a streaming replica within the lag bound', () => {
  let cluster: PgCluster;
  let app: TestApp;
  let org: TestOrganization;
  /** Writes in these tests go through the organization's admin key; this key of the same organization only reads. */
  let readerKey: string;
  let walletId: string;

  const appOn = (maxLagMs: number) =>
    createTestApp({
      ROLE: 'api',
      DATABASE_URL: cluster.primaryUrl,
      DATABASE_REPLICA_URLS: cluster.replicaUrl,
      DB_REPLICA_MAX_LAG_MS: String(maxLagMs),
    });

  /** Waits until `t` answers a GET of `path` from the replica (its monitor has measured it). */
  const untilReplicaServes = (t: TestApp, path: string, table: string) =>
    until(`${path} read from the replica`, async () => {
      await resetStatements(cluster.replicaUrl);
      await t.http().get(path).set(bearer(readerKey)).expect(200);
      return (await statementsOn(cluster.replicaUrl, table)) > 0;
    });

  const whitelistOn = async (url: string, organizationId: string) =>
    (await sql<{ enabled: boolean }>(url, 'select enabled from nft_whitelist where organization_id = $1', [organizationId]))[0]?.enabled ??
    false;
  const whitelistOnReplica = (organizationId: string) => whitelistOn(cluster.replicaUrl, organizationId);

  beforeAll(async () => {
    // Assigned before starting, so that afterAll removes whatever a failed start left behind.
    cluster = new PgCluster();
    await cluster.start();
    const options = buildOrmOptions(loadConfig({ NODE_ENV: 'test', DATABASE_URL: cluster.primaryUrl }));
    // The migrator reports each step; a suite's output is no place for it.
    const orm = await MikroORM.init({ ...options, migrations: { ...options.migrations, silent: true } });
    try {
      await runMigrations(orm, cluster.primaryUrl);
    } finally {
      await orm.close(true);
    }
    app = await appOn(500);
    org = await createOrganization(app);
    readerKey = (await createApiKey(app, org.id, ['admin'])).key;
    walletId = (await app.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'on both' }).expect(201)).body.id;
    await cluster.waitForReplay();
  });

  afterAll(async () => {
    await app?.close();
    await cluster?.destroy();
  });

  it('answers every GET route from the replica, and none of them from the primary', async () => {
    await untilReplicaServes(app, `/v1/wallets/${walletId}`, 'wallet');
    const routes: [string, string][] = [
      [`/v1/wallets/${walletId}`, 'wallet'],
      ['/v1/wallets', 'wallet'],
      [`/v2/wallets/${walletId}/nft-balances`, 'balance'],
      [WHITELIST, 'nft_whitelist'],
      ['/api/organization/v1/current-organization/webhooks', 'webhook_delivery'],
      ['/api/organization/v1/current-organization/webhooks/stats', 'webhook_delivery'],
      ['/api/organization/v1/current-organization/audit-log/export', 'audit_entry'],
    ];
    for (const [path, table] of routes) {
      await resetStatements(cluster.primaryUrl);
      await resetStatements(cluster.replicaUrl);
      await app.http().get(path).set(bearer(readerKey)).expect(200);
      expect({ path, replica: (await statementsOn(cluster.replicaUrl, table)) > 0 }).toEqual({ path, replica: true });
      expect({ path, primary: await statementsOn(cluster.primaryUrl, table) }).toEqual({ path, primary: 0 });
    }
  });

  it('keeps the primary for writes, and reads its own writes on another instance while the replica replays nothing', async () => {
    const [writer, reader] = [await appOn(60_000), await appOn(60_000)];
    try {
      await cluster.waitForReplay();
      await untilReplicaServes(reader, WHITELIST, 'nft_whitelist');
      await cluster.pauseReplay();

      await writer.http().patch(WHITELIST).set(bearer(org.adminKey)).send({ enabled: true }).expect(200);
      expect(await whitelistOnReplica(org.id)).toBe(false);
      // The writing key reads its write on the other instance: the mark is shared through Redis.
      const own = await reader.http().get(WHITELIST).set(bearer(org.adminKey)).expect(200);
      expect(own.body.enabled).toBe(true);
      // Another key reads the replica, which is within this instance's bound but has not replayed the write.
      const other = await reader.http().get(WHITELIST).set(bearer(readerKey)).expect(200);
      expect(other.body.enabled).toBe(false);

      // A row the replica does not have yet: its 404 is read again from the primary.
      const created = await writer.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'primary only' }).expect(201);
      expect(await sql(cluster.replicaUrl, 'select id from wallet where id = $1', [created.body.id])).toEqual([]);
      await resetStatements(cluster.replicaUrl);
      const fetched = await reader.http().get(`/v1/wallets/${created.body.id}`).set(bearer(readerKey)).expect(200);
      expect(fetched.body).toEqual(created.body);
      expect(await statementsOn(cluster.replicaUrl, 'wallet')).toBeGreaterThan(0);
      expect((await reader.http().get('/metrics').expect(200)).text).toMatch(/^db_replica_read_retries_total\{reason="not_found"\} [1-9]/m);
    } finally {
      await cluster.resumeReplay();
      await writer.close();
      await reader.close();
    }
  });

  it('skips a replica whose replay is paused once it is past the bound, and answers fresh data from the primary', async () => {
    await cluster.waitForReplay();
    // The previous case paused and resumed replay; the replica's reported position has been seen
    // ahead of what its queries showed right after a resume, so wait for the row itself too.
    await until(
      'the replica holds the primary’s whitelist',
      async () => (await whitelistOn(cluster.primaryUrl, org.id)) === (await whitelistOnReplica(org.id)),
      10_000,
    );
    await untilReplicaServes(app, WHITELIST, 'nft_whitelist');
    const before = (await app.http().get(WHITELIST).set(bearer(readerKey)).expect(200)).body.enabled as boolean;
    // What the service answered is what both servers hold (the replica replayed everything above).
    expect({ primary: await whitelistOn(cluster.primaryUrl, org.id), replica: await whitelistOnReplica(org.id) }).toEqual({
      primary: before,
      replica: before,
    });
    await cluster.pauseReplay();
    try {
      await app.http().patch(WHITELIST).set(bearer(org.adminKey)).send({ enabled: !before }).expect(200);
      const statuses: number[] = [];
      // Past 500 ms behind, the replica leaves the rotation within a second.
      await until(
        'the fresh value read',
        async () => {
          const res = await app.http().get(WHITELIST).set(bearer(readerKey));
          statuses.push(res.status);
          return res.status === 200 && res.body.enabled === !before;
        },
        5000,
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
      expect(await whitelistOnReplica(org.id)).toBe(before);

      await resetStatements(cluster.replicaUrl);
      const fresh = await app.http().get(WHITELIST).set(bearer(readerKey)).expect(200);
      expect(fresh.body.enabled).toBe(!before);
      expect(await statementsOn(cluster.replicaUrl, 'nft_whitelist')).toBe(0);
      const metrics = await app.http().get('/metrics').expect(200);
      expect(metrics.text).toContain(`db_replica_usable{replica="${new URL(cluster.replicaUrl).host}/nft_wallet"} 0`);
    } finally {
      await cluster.resumeReplay();
    }
    // Caught up, it serves reads again.
    await cluster.waitForReplay();
    await untilReplicaServes(app, WHITELIST, 'nft_whitelist');
  });

  it('skips a stopped replica without a 5xx, and readiness does not depend on it', async () => {
    await untilReplicaServes(app, `/v1/wallets/${walletId}`, 'wallet');
    await app.http().get('/health/ready').expect(200);
    const statuses: number[] = [];
    let stopped = false;
    const stopping = cluster.stopReplica().then(() => (stopped = true));
    let stoppedAt = 0;
    // Reads while the replica shuts down and for a while after, in flight on it or sent to it.
    while (stoppedAt === 0 || Date.now() - stoppedAt < 1500) {
      const res = await app.http().get(`/v1/wallets/${walletId}`).set(bearer(readerKey));
      statuses.push(res.status);
      if (stopped && stoppedAt === 0) stoppedAt = Date.now();
    }
    await stopping;
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(statuses.length).toBeGreaterThan(1);
    await app.http().get('/health/ready').expect(200);
    await until('the stopped replica reported as skipped', async () => {
      const metrics = await app.http().get('/metrics').expect(200);
      return metrics.text.includes(`db_replica_usable{replica="${new URL(cluster.replicaUrl).host}/nft_wallet"} 0`);
    });
  });
});
