import { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { queryRows } from '../src/database/raw-sql';
import { DeliveryMaintenanceRepository } from '../src/modules/webhooks/delivery-maintenance.repository';
import { DeliveryStatus, WebhookDelivery } from '../src/modules/webhooks/webhook-delivery.entity';
import {
  DeliveryLogQuery,
  deliveryPageSql,
  ReplayFilter,
  replayableSql,
  WebhookDeliveryRepository,
} from '../src/modules/webhooks/webhook-delivery.repository';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { createTestApp, TestApp } from './support/test-app';
import { WEBHOOKS_PATH } from './support/webhooks';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const COUNT = 360;
const STATUSES: DeliveryStatus[] = ['succeeded', 'failed', 'pending', 'succeeded', 'failed'];
const TYPES = ['nft', 'transaction', 'kyc', 'nft'];
const utc = (date: Date) => date.toISOString().replace('Z', '+00:00');

interface Row {
  id: string;
  createdAt: Date;
  status: DeliveryStatus;
  endpointId: string;
  webhookType: string;
}

/** Every combination of a list of choices, each choice `undefined` for "not given". */
function combinations<T extends Record<string, readonly unknown[]>>(choices: T): { [K in keyof T]: T[K][number] }[] {
  return Object.entries(choices).reduce<Record<string, unknown>[]>(
    (all, [name, values]) => all.flatMap((partial) => values.map((value) => ({ ...partial, [name]: value }))),
    [{}],
  ) as { [K in keyof T]: T[K][number] }[];
}

/** Scan nodes of a JSON plan under the first node of `type` (the whole plan when there is none). */
function scansUnder(plan: Record<string, unknown>, type: string): Record<string, unknown>[] {
  const find = (node: Record<string, unknown>): Record<string, unknown> | undefined =>
    node['Node Type'] === type ? node : ((node.Plans as Record<string, unknown>[] | undefined) ?? []).map(find).find(Boolean);
  const scans: Record<string, unknown>[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (/Scan$/.test(String(node['Node Type'])) && node['Relation Name']) scans.push(node);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(find(plan) ?? plan);
  return scans;
}

/**
 * The delivery log and a replay choose exactly the webhooks their filters describe, in every
 * combination of filters (the log page after page, newest first), and choose them from the
 * indexes alone: no row is read to decide whether a webhook belongs to the page or the replay.
 */
describe('delivery log and replay selection', () => {
  let t: TestApp;
  let database: { url: string; drop: () => Promise<void> };
  let org: TestOrganization;
  let repository: WebhookDeliveryRepository;
  const rows: Row[] = [];
  const endpoints: string[] = [];
  const now = Date.now();

  beforeAll(async () => {
    // A database of the suite's own: the plans must show no heap fetch, and other suites' webhooks
    // retried meanwhile would leave pages of the shared database not all-visible.
    database = await createIsolatedDatabase('logreads');
    t = await createTestApp({ DATABASE_URL: database.url });
    org = await createOrganization(t);
    // As a request does: a context of its own.
    repository = t.app.get(EntityManager).fork().getRepository(WebhookDelivery);
    endpoints.push(org.id, uuidv7(), uuidv7());
    await new DeliveryMaintenanceRepository(t.app.get(EntityManager).fork()).makePartitions(new Date(now - 3 * DAY_MS), new Date(now));
    // Over the last 2.5 days, in the day partitions. Every 7th webhook was created 3 hours after
    // its event (the event waited to be judged), so creation time and id order disagree for it.
    for (let i = 0; i < COUNT; i += 1) {
      const msecs = now - 2.5 * DAY_MS + Math.floor((i * 2.5 * DAY_MS) / COUNT);
      rows.push({
        id: uuidv7({ msecs }),
        createdAt: new Date(msecs + (i % 7 === 0 ? 3 * HOUR_MS : i % 1000)),
        status: STATUSES[i % STATUSES.length],
        endpointId: endpoints[i % endpoints.length],
        webhookType: TYPES[i % TYPES.length],
      });
    }
    // Four times as many of another organization, interleaved: the indexes lead with the organization.
    const other = await createOrganization(t);
    const others = Array.from({ length: 4 * COUNT }, (_, i) => {
      const msecs = now - 2.5 * DAY_MS + Math.floor((i * 2.5 * DAY_MS) / (4 * COUNT)) + 1;
      return {
        id: uuidv7({ msecs }),
        createdAt: new Date(msecs),
        status: STATUSES[i % 5],
        endpointId: other.id,
        webhookType: TYPES[i % 4],
      };
    });
    // Pending ones have no next attempt time: no worker takes them up while the suite reads.
    const all = [...rows.map((r) => ({ ...r, organizationId: org.id })), ...others.map((r) => ({ ...r, organizationId: other.id }))];
    await queryRows(
      t.app.get(EntityManager),
      `insert into webhook_delivery (id, event_id, endpoint_id, created_at, organization_id, webhook_type, resource_type, resource_id,
         action, payload, event_created_at, status, attempt_count, cycle_start_attempt, last_response_status)
       select u.id, u.id, u.endpoint_id, u.created_at, u.organization_id, u.webhook_type, 'Token', u.id, 'create', '{}', u.created_at,
              u.status, 1, 0, case when u.status = 'succeeded' then 200 else 500 end
         from unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::text[], ?::text[], ?::uuid[])
           as u(id, endpoint_id, created_at, webhook_type, status, organization_id)`,
      [
        all.map((r) => r.id),
        all.map((r) => r.endpointId),
        all.map((r) => r.createdAt.toISOString()),
        all.map((r) => r.webhookType),
        all.map((r) => r.status),
        all.map((r) => r.organizationId),
      ],
    );
    // All-visible pages, as autovacuum leaves a day's partition once its webhooks are finished.
    // (On a connection of its own: the service's connections run each statement bounded, in a transaction.)
    const direct = new Client({ connectionString: t.config.databaseDirectUrl });
    await direct.connect();
    try {
      // A vacuum leaves a page not all-visible while any transaction older than its rows still
      // runs (the app's own background work, slow on a loaded machine): vacuum until every page
      // of every partition is marked, as autovacuum eventually would.
      for (let round = 0; round < 40; round += 1) {
        await direct.query('vacuum analyze webhook_delivery');
        const { rows } = await direct.query<{ unmarked: string }>(
          `select coalesce(sum(c.relpages - c.relallvisible), 0) as unmarked
             from pg_inherits i join pg_class c on c.oid = i.inhrelid
            where i.inhparent = 'webhook_delivery'::regclass`,
        );
        if (Number(rows[0].unmarked) === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      await direct.end();
    }
  });
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  const since = new Date(now - 30 * HOUR_MS);
  const until = new Date(now - 6 * HOUR_MS);
  const matches = (r: Row, f: DeliveryLogQuery) =>
    (!f.status || r.status === f.status) &&
    (!f.endpointId || r.endpointId === f.endpointId) &&
    (!f.webhookTypes || f.webhookTypes.includes(r.webhookType)) &&
    (!f.since || r.createdAt >= f.since) &&
    (!f.until || r.createdAt < f.until);
  const newestFirst = (selected: Row[]) => selected.map((r) => r.id).sort((a, b) => (a < b ? 1 : -1));

  const logFilters = combinations({
    status: [undefined, 'failed', 'pending'] as const,
    endpointId: [undefined, 'second'] as const,
    webhookTypes: [undefined, ['kyc'], ['nft', 'kyc']] as const,
    window: [undefined, 'since', 'both'] as const,
  }).map(({ status, endpointId, webhookTypes, window }): DeliveryLogQuery => ({
    ...(status ? { status } : {}),
    ...(endpointId ? { endpointId: endpoints[1] } : {}),
    ...(webhookTypes ? { webhookTypes: [...webhookTypes] } : {}),
    ...(window ? { since } : {}),
    ...(window === 'both' ? { until } : {}),
  }));

  it('pages through the log newest first with every combination of filters', async () => {
    for (const filter of logFilters) {
      const query = new URLSearchParams({ pageSize: '9' });
      if (filter.status) query.set('status', filter.status);
      if (filter.endpointId) query.set('endpointId', filter.endpointId);
      for (const type of filter.webhookTypes ?? []) query.append('webhookType', type);
      if (filter.since) query.set('since', utc(filter.since));
      if (filter.until) query.set('until', utc(filter.until));
      const seen: string[] = [];
      let pages = 0;
      for (let key: string | null = null; pages === 0 || key; pages += 1) {
        if (key) query.set('pageKey', key);
        const res = await t.http().get(`${WEBHOOKS_PATH}?${query.toString()}`).set(bearer(org.adminKey)).expect(200);
        expect(res.body.webhooks.length).toBeLessThanOrEqual(9);
        if (res.body.nextPageKey) expect(res.body.webhooks).toHaveLength(9);
        seen.push(...(res.body.webhooks as { id: string }[]).map((w) => w.id));
        key = res.body.nextPageKey;
      }
      expect({ filter, ids: seen }).toEqual({ filter, ids: newestFirst(rows.filter((r) => matches(r, filter))) });
    }
  });

  it('shows each webhook of a page as it is stored', async () => {
    const page = await repository.page(org.id, { status: 'failed' }, null, 20);
    const stored = await t.app
      .get(EntityManager)
      .fork()
      .find(WebhookDelivery, { id: { $in: page.map((w) => w.id) } }, { orderBy: { id: 'desc' } });
    expect(page.map((w) => ({ ...w }))).toEqual(stored.map((w) => ({ ...w })));
    expect(page[0].createdAt).toBeInstanceOf(Date);
  });

  it('selects for a replay exactly the webhooks of its window (on creation time) and filters, newest first', async () => {
    const replays = combinations({
      statuses: [['failed'], ['failed', 'succeeded']] as const,
      endpointId: [undefined, 'second'] as const,
      webhookTypes: [undefined, ['kyc'], ['nft', 'kyc']] as const,
      window: ['all', 'inner'] as const,
      limit: [10_001, 5] as const,
    });
    for (const { statuses, endpointId, webhookTypes, window, limit } of replays) {
      const filter: ReplayFilter = {
        since: window === 'all' ? new Date(now - 3 * DAY_MS) : since,
        until: window === 'all' ? new Date(now + HOUR_MS) : until,
        statuses: [...statuses],
        ...(endpointId ? { endpointId: endpoints[1] } : {}),
        ...(webhookTypes ? { webhookTypes: [...webhookTypes] } : {}),
      };
      const expected = newestFirst(
        rows.filter(
          (r) =>
            filter.statuses.includes(r.status) &&
            matches(r, { endpointId: filter.endpointId, webhookTypes: filter.webhookTypes, since: filter.since, until: filter.until }),
        ),
      ).slice(0, limit);
      expect({ filter, limit, ids: await repository.replayable(org.id, filter, limit) }).toEqual({ filter, limit, ids: expected });
    }
  });

  /**
   * The service's own statements, explained on the real tables with sequential and bitmap scans
   * set aside: on a few hundred rows the planner rightly prefers those. What is left is a scan of
   * an index, and one that never visits a row (an Index Only Scan) only where the index carries
   * every column the statement tests. (On a realistic volume the planner chooses these plans by
   * itself: bench/webhook-log-reads.ts.)
   */
  async function explain(statement: { sql: string; bindings: unknown[] }): Promise<Record<string, unknown>> {
    const knex = t.app.get(EntityManager).getKnex();
    return knex.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off; set local enable_bitmapscan = off');
      const result = await trx.raw(`explain (analyze, format json) ${statement.sql}`, statement.bindings as never[]);
      return (result.rows[0]['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0].Plan;
    });
  }

  /** The day partitions holding this suite's webhooks: every scan of them must be index-only. */
  const holding = (scans: Record<string, unknown>[]) => scans.filter((s) => /_p\d{8}$/.test(String(s['Relation Name'])));

  /** Every scan chooses from an index alone and visits no row; at least one scans a day holding webhooks. */
  function expectIndexOnly(filter: unknown, scans: Record<string, unknown>[]): void {
    expect(holding(scans).length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect({
        filter,
        relation: scan['Relation Name'],
        node: scan['Node Type'],
        index: scan['Index Name'],
        heapFetches: scan['Heap Fetches'],
      }).toEqual({
        filter,
        relation: scan['Relation Name'],
        node: 'Index Only Scan',
        index: scan['Index Name'],
        heapFetches: 0,
      });
    }
  }

  it('chooses a page of the log with index-only scans, whatever its filters', async () => {
    for (const filter of logFilters) {
      const plan = await explain(deliveryPageSql(org.id, filter, null, 10));
      expectIndexOnly(filter, scansUnder(plan, 'Limit'));
    }
  });

  it('chooses a replay with index-only scans, whatever its filters', async () => {
    for (const statuses of [['failed'], ['failed', 'succeeded']] as DeliveryStatus[][]) {
      for (const extra of [
        {},
        { endpointId: endpoints[1] },
        { webhookTypes: ['nft', 'kyc'] },
        { endpointId: endpoints[2], webhookTypes: ['kyc'] },
      ]) {
        const filter: ReplayFilter = { since, until, statuses, ...extra };
        expectIndexOnly(filter, scansUnder(await explain(replayableSql(org.id, filter, 10_001)), 'Limit'));
      }
    }
  });
});
