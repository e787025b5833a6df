import { v7 as uuidv7 } from 'uuid';
import { bearer, createApiKey } from './support/factories';
import { upgradeDatabase } from './support/isolated-database';
import { createTestApp } from './support/test-app';

const BEFORE_ENDPOINTS = 'Migration20261123110000WebhookSecretRotation';
const BASE = '/api/organization/v1/current-organization';

/**
 * An installation upgraded to endpoints keeps its history: its configuration becomes the default
 * endpoint and every webhook it sent belongs to it, under the same id.
 */
describe('webhook endpoints migration', () => {
  const database = upgradeDatabase('endpointsmig');
  const databaseUrl = database.url;

  afterAll(() => database.drop());

  it('makes the configuration the default endpoint and keeps every webhook, with its id, as its event and endpoint', async () => {
    const orm = await database.open();
    const orgId = '01930000-0000-7000-8000-0000000000b1';
    // The history is kept by the time its ids carry: webhooks of an hour ago, well inside the
    // retention the started app enforces (ids of a fixed past day would be dropped with their
    // day once that day is older than the retention, and the log read after it would be empty).
    const sentAt = [Date.now() - 3_600_000, Date.now() - 3_599_000];
    const webhookIds = sentAt.map((msecs) => uuidv7({ msecs }));
    try {
      await orm.getMigrator().up({ to: BEFORE_ENDPOINTS });
      const conn = orm.em.getConnection();
      await conn.execute(`insert into "organization" ("id", "created_at", "name") values (?, '2026-11-01T10:00:00.000Z', 'Legacy')`, [
        orgId,
      ]);
      await conn.execute(
        `insert into "webhook_config" ("organization_id", "url", "enabled", "webhook_types", "updated_at")
         values (?, 'https://hooks.example.com/legacy', false, '{nft}', '2026-11-01T10:00:01.000Z')`,
        [orgId],
      );
      for (const [i, id] of webhookIds.entries()) {
        await conn.execute(
          `insert into "webhook_delivery" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action",
             "payload", "event_created_at", "status", "attempt_count", "cycle_start_attempt", "last_response_status", "succeeded_at")
           values (?, ?, ?, 'nft', 'Token', ?, 'create', '{}', ?, 'succeeded', 1, 0, 200, ?)`,
          [id, new Date(sentAt[i]), orgId, id, new Date(sentAt[i]), new Date(sentAt[i] + 100)],
        );
      }
      await orm.getMigrator().up();
    } finally {
      await orm.close(true);
    }

    const app = await createTestApp({ DATABASE_URL: databaseUrl });
    try {
      const auditor = (await createApiKey(app, orgId, ['auditor'])).key;
      const endpoints = await app.http().get(`${BASE}/webhook-endpoints`).set(bearer(auditor)).expect(200);
      expect(endpoints.body.endpoints).toEqual([
        expect.objectContaining({
          id: orgId,
          isDefault: true,
          url: 'https://hooks.example.com/legacy',
          webhookTypes: ['nft'],
          enabled: false,
        }),
      ]);
      const log = await app.http().get(`${BASE}/webhooks?endpointId=${orgId}`).set(bearer(auditor)).expect(200);
      expect(
        log.body.webhooks.map((w: { id: string; eventId: string; endpointId: string; status: string }) => [
          w.id,
          w.eventId,
          w.endpointId,
          w.status,
        ]),
      ).toEqual([...webhookIds].reverse().map((id) => [id, id, orgId, 'succeeded']));
    } finally {
      await app.close();
    }
  });
});
