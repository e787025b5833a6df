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
    const webhookIds = ['01930000-0000-7000-8000-000000000201', '01930000-0000-7000-8000-000000000202'];
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
          [id, `2026-11-01T10:00:0${i + 2}.000Z`, orgId, id, `2026-11-01T10:00:0${i + 2}.000Z`, `2026-11-01T10:00:0${i + 2}.100Z`],
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
