import { v7 as uuidv7 } from 'uuid';
import { bearer, createApiKey } from './support/factories';
import { upgradeDatabase } from './support/isolated-database';
import { createTestApp } from './support/test-app';

const BEFORE_PARTITIONS = 'Migration20261125030000AuditImmutable';
const WEBHOOKS_PATH = '/api/organization/v1/current-organization/webhooks';
const DAY_MS = 86_400_000;
const dayName = (at: Date) => at.toISOString().slice(0, 10).replaceAll('-', '');

/**
 * An installation upgraded to the day-partitioned history keeps every event, webhook and attempt,
 * each in the partition of the day its id was made, and one whose id is not a UUIDv7 in the
 * default partition; the delivery log shows them as before.
 */
describe('time partitions migration', () => {
  const database = upgradeDatabase('partitionsmig');
  const databaseUrl = database.url;

  afterAll(() => database.drop());

  it('moves the existing history into day partitions and the log still shows every webhook with its attempts', async () => {
    const orm = await database.open();
    const orgId = '01930000-0000-7000-8000-0000000000c1';
    const now = Date.now();
    // Ten days ago, yesterday and now, plus one id that is not a UUIDv7.
    const times = [now - 10 * DAY_MS, now - DAY_MS, now, now - 2 * DAY_MS];
    const ids = [...times.slice(0, 3).map((msecs) => uuidv7({ msecs })), 'a1b2c3d4-0000-4000-8000-0000000000c9'];
    try {
      await orm.getMigrator().up({ to: BEFORE_PARTITIONS });
      const conn = orm.em.getConnection();
      await conn.execute(`insert into "organization" ("id", "created_at", "name") values (?, now(), 'Before partitions')`, [orgId]);
      for (const [i, id] of ids.entries()) {
        const at = new Date(times[i]).toISOString();
        await conn.execute(
          `insert into "domain_event" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action",
             "relayed_at", "processed_at") values (?, ?, ?, 'nft', 'Token', ?, 'create', ?, ?)`,
          [id, at, orgId, id, at, at],
        );
        await conn.execute(
          `insert into "webhook_delivery" ("id", "event_id", "endpoint_id", "created_at", "organization_id", "webhook_type", "resource_type",
             "resource_id", "action", "payload", "event_created_at", "status", "attempt_count", "cycle_start_attempt", "last_response_status")
           values (?, ?, ?, ?, ?, 'nft', 'Token', ?, 'create', '{}', ?, 'failed', 2, 0, 500)`,
          [id, id, orgId, at, orgId, id, at],
        );
        for (const attempt of [1, 2]) {
          await conn.execute(
            `insert into "webhook_attempt" ("delivery_id", "attempt", "started_at", "duration_ms", "response_status", "error")
             values (?, ?, ?, 7, 500, 'receiver answered 500')`,
            [id, attempt, at],
          );
        }
      }
      await orm.getMigrator().up();

      const placed = async (table: string, key: string) =>
        Object.fromEntries(
          (
            await conn.execute<{ id: string; part: string }[]>(
              `select "${key}" as id, tableoid::regclass::text as part from "${table}" where "${key}" in (?, ?, ?, ?)`,
              ids,
            )
          ).map((r) => [r.id, r.part]),
        );
      const expected = (table: string) => ({
        [ids[0]]: `${table}_p${dayName(new Date(times[0]))}`,
        [ids[1]]: `${table}_p${dayName(new Date(times[1]))}`,
        [ids[2]]: `${table}_p${dayName(new Date(times[2]))}`,
        [ids[3]]: `${table}_default`,
      });
      expect(await placed('domain_event', 'id')).toEqual(expected('domain_event'));
      expect(await placed('webhook_delivery', 'id')).toEqual(expected('webhook_delivery'));
      expect(await placed('webhook_attempt', 'delivery_id')).toEqual(expected('webhook_attempt'));
      const [counts] = await conn.execute<{ attempts: number; kind: string }[]>(
        `select (select count(*)::int from webhook_attempt) as attempts, (select relkind::text from pg_class where relname = 'webhook_delivery') as kind`,
      );
      expect(counts).toEqual({ attempts: 8, kind: 'p' });
      // Today and the next two days are ready for new webhooks.
      for (const ahead of [1, 2]) {
        const [made] = await conn.execute<{ name: string | null }[]>(`select to_regclass(?)::text as name`, [
          `webhook_delivery_p${dayName(new Date(now + ahead * DAY_MS))}`,
        ]);
        expect(made.name).not.toBeNull();
      }
    } finally {
      await orm.close(true);
    }

    const app = await createTestApp({ DATABASE_URL: databaseUrl });
    try {
      const auditor = (await createApiKey(app, orgId, ['auditor'])).key;
      const log = await app.http().get(`${WEBHOOKS_PATH}?pageSize=10`).set(bearer(auditor)).expect(200);
      expect(new Set(log.body.webhooks.map((w: { id: string }) => w.id))).toEqual(new Set(ids));
      const one = await app.http().get(`${WEBHOOKS_PATH}/${ids[0]}`).set(bearer(auditor)).expect(200);
      expect(one.body).toEqual(expect.objectContaining({ id: ids[0], status: 'failed', attemptCount: 2 }));
      expect(one.body.attempts.map((a: { attempt: number; responseStatus: number }) => [a.attempt, a.responseStatus])).toEqual([
        [1, 500],
        [2, 500],
      ]);
    } finally {
      await app.close();
    }
  });
});
