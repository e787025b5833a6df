import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { bearer, createApiKey } from './support/factories';
import { upgradeDatabase } from './support/isolated-database';
import { createTestApp, OPERATOR_KEY } from './support/test-app';

const ZEROS = '0'.repeat(64);
const BEFORE_CHAIN = 'Migration20261122040000WebhookDelivery';

/** Entries written before the chain existed get chained by the migration, in the order they were written. */
describe('audit chain migration', () => {
  const database = upgradeDatabase('auditmig');
  const databaseUrl = database.url;

  afterAll(() => database.drop());

  it('backfills hashes that verify, and new entries continue the chain', async () => {
    const orm = await database.open();
    const orgId = '01930000-0000-7000-8000-0000000000a1';
    const ids = [1, 2, 3].map((i) => `01930000-0000-7000-8000-00000000010${i}`);
    try {
      await orm.getMigrator().up({ to: BEFORE_CHAIN });
      const conn = orm.em.getConnection();
      await conn.execute(`insert into "organization" ("id", "created_at", "name") values (?, '2026-11-01T10:00:00.000Z', 'Legacy')`, [
        orgId,
      ]);
      // Written out of id order on purpose: the chain follows time of writing.
      const rows = [
        [ids[0], '2026-11-01T10:00:00.001Z', 'organization.create', { name: { from: null, to: 'Legacy' } }],
        [ids[2], '2026-11-01T10:00:00.002Z', 'webhookConfig.update', { enabled: { from: false, to: true } }],
        [ids[1], '2026-11-01T10:00:00.003Z', 'apiKey.revoke', { revokedAtUtc: { from: null, to: '2026-11-01T10:00:00.003Z' } }],
      ] as const;
      for (const [id, at, action, changes] of rows) {
        await conn.execute(
          `insert into "audit_entry" ("id", "created_at", "organization_id", "action", "api_key_id", "key_prefix", "request_id", "ip", "changes")
           values (?, ?, ?, ?, null, 'operator', 'req-1', '127.0.0.1', ?)`,
          [id, at, orgId, action, JSON.stringify(changes)],
        );
      }
      await orm.getMigrator().up();

      const chained = await conn.execute<{ id: string; chain_seq: string; hash: string }[]>(
        'select "id", "chain_seq", "hash" from "audit_entry" where "organization_id" = ? order by "chain_seq"',
        [orgId],
      );
      expect(chained.map((r) => r.id)).toEqual([ids[0], ids[2], ids[1]]);
      // Recomputed here from the contract's definition, independently of the service's code.
      let previous = ZEROS;
      rows.forEach(([id, at, action, changes], i) => {
        const entry = {
          id,
          action,
          apiKeyId: null,
          keyPrefix: 'operator',
          requestId: 'req-1',
          ip: '127.0.0.1',
          createdAtUtc: at.replace('Z', '000+00:00'),
          changes,
        };
        previous = createHash('sha256')
          .update(previous + canonicalize(entry)!)
          .digest('hex');
        expect(chained[i].hash).toBe(previous);
      });
    } finally {
      await orm.close(true);
    }

    const app = await createTestApp({ DATABASE_URL: databaseUrl });
    try {
      const auditor = (await createApiKey(app, orgId, ['auditor'])).key;
      const res = await app.http().get('/api/organization/v1/current-organization/audit-log/verify').set(bearer(auditor)).expect(200);
      expect(res.body).toMatchObject({ valid: true, entries: 4 });
      await app.http().get('/admin/v1/organizations').set(bearer(OPERATOR_KEY)).expect(200);
    } finally {
      await app.close();
    }
  });
});
