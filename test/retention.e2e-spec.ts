import { Client } from 'pg';
import { IdempotencyKeyPurger } from '../src/modules/transactions/idempotency-key.purger';
import { createOrganization, TestOrganization } from './support/factories';
import { waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';

const PURGE_LOCK = 7_341_015;

describe('idempotency key retention', () => {
  let t: TestApp;
  let db: Client;
  let org: TestOrganization;

  const keysOf = async (): Promise<string[]> =>
    (await db.query('select key from idempotency_key where organization_id = $1 order by key', [org.id])).rows.map((r) => r.key);

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await db.connect();
    // Held from the start, so that the purge cannot run before the rows are in place.
    await db.query('select pg_advisory_lock($1)', [PURGE_LOCK]);
    t = await createTestApp({ IDEMPOTENCY_PURGE_INTERVAL: '200ms', PURGE_BATCH_SIZE: '2' });
    org = await createOrganization(t);
    const insert = (key: string, ageHours: number) =>
      db.query(
        `insert into idempotency_key (organization_id, scope, key, request_hash, response_status, response_body, created_at)
         values ($1, 'POST /v1/transactions', $2, 'h', 201, '{}'::jsonb, now() - make_interval(secs => $3))`,
        [org.id, key, ageHours * 3600],
      );
    for (let i = 0; i < 5; i += 1) await insert(`expired-${i}`, 24 + i + 0.1);
    await insert('fresh-a', 23.5);
    await insert('fresh-b', 0);
  });
  afterAll(async () => {
    await t.close();
    await db.end();
  });

  it('lets one process purge at a time: another holding the purge lock makes it stand aside', async () => {
    expect(await t.app.get(IdempotencyKeyPurger).purge()).toBeNull();
    expect(await keysOf()).toHaveLength(7);
  });

  it('purges keys past their 24 h in batches, on its own schedule, and keeps those still in their window', async () => {
    await db.query('select pg_advisory_unlock($1)', [PURGE_LOCK]);
    const left = await waitUntil(keysOf, (keys) => keys.length === 2);
    expect(left).toEqual(['fresh-a', 'fresh-b']);
  });
});
