import { EntityManager } from '@mikro-orm/postgresql';
import type { Knex } from 'knex';
import { Client } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { execute } from '../src/database/raw-sql';
import { DeliveryClaimRepository } from '../src/modules/webhooks/delivery-claim.repository';
import { DeliveryMaintenanceRepository } from '../src/modules/webhooks/delivery-maintenance.repository';
import { createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { createTestApp, TestApp } from './support/test-app';

const DONE = 3000;
const BACKLOG = 3000;
const BATCH = 100;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode): PlanNode[] {
  const own = node['Relation Name'] ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap(scans)];
}

/**
 * The engine's claim and result statements reach each webhook of their batch by primary key,
 * whatever the planner's statistics say. A busy table's statistics are mostly taken when nothing is
 * pending (after a burst, by autovacuum or a nightly ANALYZE); with those, a plan that read every
 * pending webhook through the partial index of due webhooks looked cheap, and during the next
 * burst it read the whole backlog on every statement. Each statement is the repository's own,
 * captured as it runs against the real tables, then explained.
 */
describe('claim and result statements under a backlog the statistics have not seen', () => {
  let t: TestApp;
  let database: { url: string; drop: () => Promise<void> };
  let org: TestOrganization;
  let repository: DeliveryClaimRepository;
  let knex: Knex;
  const backlog: string[] = [];

  beforeAll(async () => {
    database = await createIsolatedDatabase('deliverystatements');
    t = await createTestApp({ DATABASE_URL: database.url });
    org = await createOrganization(t);
    const em = t.app.get(EntityManager);
    repository = new DeliveryClaimRepository(em.fork());
    knex = em.getKnex();
    const now = Date.now();
    await new DeliveryMaintenanceRepository(em.fork()).makePartitions(new Date(now), new Date(now));
    const insert = (ids: string[], status: string) =>
      execute(
        em,
        `insert into webhook_delivery (id, event_id, endpoint_id, created_at, organization_id, webhook_type, resource_type, resource_id,
           action, payload, event_created_at, status, attempt_count, cycle_start_attempt)
         select u.id, u.id, ?, now(), ?, 'transaction', 'Transaction', u.id, 'create', '{}', now(), ?, 1, 0
           from unnest(?::uuid[]) as u(id)`,
        [org.id, org.id, status, ids],
      );
    // A day of delivered webhooks, analyzed: the statistics say nothing is pending.
    await insert(
      Array.from({ length: DONE }, (_, i) => uuidv7({ msecs: now - 60_000 + i })),
      'succeeded',
    );
    await execute(em, 'analyze webhook_delivery');
    // Then a burst: pending webhooks the statistics do not know of. No next attempt time, so no
    // worker of the app takes them up while the suite looks.
    backlog.push(...Array.from({ length: BACKLOG }, (_, i) => uuidv7({ msecs: now - 30_000 + i })));
    await insert(backlog, 'pending');
  });

  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  /** Runs `work` and returns the statements it sent through the pool (as sent: text and parameters). */
  async function captured(work: () => Promise<unknown>): Promise<{ sql: string; bindings: unknown[] }[]> {
    const statements: { sql: string; bindings: unknown[] }[] = [];
    const listener = (query: { sql: string; bindings?: unknown[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
    knex.on('query', listener);
    try {
      await work();
    } finally {
      knex.removeListener('query', listener);
    }
    return statements;
  }

  /**
   * The scans of the partitions holding `ids`, in the plan the statement gets now (the days ahead,
   * empty, are a scan of no pages whatever the plan).
   */
  async function scansOf(statement: { sql: string; bindings: unknown[] }, ids: string[]): Promise<PlanNode[]> {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const holding = await client.query<{ name: string }>(
        'select distinct tableoid::regclass::text as name from webhook_delivery where id = any($1::uuid[])',
        [ids],
      );
      const names = new Set(holding.rows.map((r) => r.name));
      // A few thousand rows are read faster whole than by index; on a real table they are not,
      // so whole-table and bitmap scans are set aside and the choice left is which index.
      await client.query('set enable_seqscan = off');
      await client.query('set enable_bitmapscan = off');
      const result = await client.query(`explain (format json) ${statement.sql}`, statement.bindings);
      const plan = (result.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
      return scans(plan).filter((s) => names.has(s['Relation Name'] ?? ''));
    } finally {
      await client.end();
    }
  }

  /** The one statement among `statements` (the app's own work runs through the same pool) that matches. */
  function theOne(statements: { sql: string; bindings: unknown[] }[], pattern: RegExp): { sql: string; bindings: unknown[] } {
    const matching = statements.filter((s) => pattern.test(s.sql));
    expect(matching).toHaveLength(1);
    return matching[0];
  }

  /**
   * The batch's webhooks are found by primary key, and nothing reads the partial indexes of pending
   * webhooks, which hold the whole backlog. (Another index may serve a lookup of its own: the claim
   * looks up earlier webhooks of an ordered resource by endpoint, resource and sequence.)
   */
  function expectPrimaryKeyProbes(found: PlanNode[]): void {
    const indexes = found.map((scan) => `${scan['Node Type']} ${scan['Index Name'] ?? ''}`);
    expect(indexes).toContainEqual(expect.stringMatching(/^Index Scan webhook_delivery_p\d{8}_pkey$/));
    expect(indexes.filter((index) => /next_attempt_at|pending|Seq Scan|Bitmap/.test(index))).toEqual([]);
  }

  it('claims a batch of the backlog by primary key', async () => {
    const batch = backlog.slice(0, BATCH);
    const now = new Date();
    let claimed = 0;
    const statements = await captured(async () => {
      const result = await repository.claim(
        batch.map((id) => ({ id, expectedAttemptCount: 1, previousStartedAt: null, numbered: false })),
        now,
        new Date(now.getTime() + 60_000),
      );
      claimed = result.claimed.size;
    });
    expect(claimed).toBe(BATCH);
    expectPrimaryKeyProbes(await scansOf(theOne(statements, /update webhook_delivery w set attempt_count/), batch));
  });

  it('records a batch of results by primary key', async () => {
    const batch = backlog.slice(BATCH, 2 * BATCH);
    const now = new Date();
    let recorded = 0;
    const statements = await captured(async () => {
      const applied = await repository.recordResults(
        batch.map((id) => ({
          id,
          organizationId: org.id,
          endpointId: org.id,
          attempt: 1,
          cycleStartAttempt: 0,
          startedAt: now,
          durationMs: 3,
          responseStatus: 200,
          responseBody: null,
          error: null,
          inFlightLimit: 10,
          status: 'succeeded' as const,
          sequence: null,
          nextAttemptAt: null,
          succeededAt: now,
          exhausts: false,
        })),
      );
      recorded = applied.size;
    });
    expect(recorded).toBe(BATCH);
    expectPrimaryKeyProbes(await scansOf(theOne(statements, /update webhook_delivery w set status = u\.status/), batch));
  });
});
