import { loadConfig } from '../src/config/app-config';
import { DeliveryTargetReader } from '../src/modules/webhook-endpoints/delivery-target.reader';
import { sealSecret } from '../src/common/crypto/secret-box';
import { bearer, createApiKey } from './support/factories';
import { upgradeDatabase } from './support/isolated-database';
import { createTestApp, testEnv } from './support/test-app';

const BEFORE_ONE_TABLE = 'Migration20261123210000WebhookStats';
const BASE = '/api/organization/v1/current-organization';

/**
 * An installation upgraded to one endpoint table keeps every endpoint as it was: the webhook
 * configuration becomes the default endpoint's row (same id, url, types, switch, reason and both
 * secrets), the other endpoints stay, and an organization that never configured anything still
 * reads the defaults.
 */
describe('one endpoint table migration', () => {
  const database = upgradeDatabase('oneendpointmig', testEnv());
  const databaseUrl = database.url;

  afterAll(() => database.drop());

  it('makes each configuration its default endpoint row, secrets and all, and keeps the other endpoints', async () => {
    const orm = await database.open();
    const configured = '01930000-0000-7000-8000-0000000000c1';
    const untouched = '01930000-0000-7000-8000-0000000000c2';
    const other = '01930000-0000-7000-8000-0000000000d1';
    const keyring = loadConfig(testEnv({ DATABASE_URL: databaseUrl })).secretsEncryptionKey;
    const expiry = new Date(Date.now() + 3_600_000);
    try {
      await orm.getMigrator().up({ to: BEFORE_ONE_TABLE });
      const conn = orm.em.getConnection();
      for (const [id, name] of [
        [configured, 'Configured'],
        [untouched, 'Untouched'],
      ]) {
        await conn.execute(`insert into "organization" ("id", "created_at", "name") values (?, '2026-11-01T10:00:00.000Z', ?)`, [id, name]);
      }
      await conn.execute(
        `insert into "webhook_config" ("organization_id", "url", "enabled", "webhook_types", "shared_secret_sealed",
           "previous_shared_secret_sealed", "previous_secret_expires_at", "disabled_reason", "updated_at")
         values (?, 'https://hooks.example.com/legacy', false, '{nft,transaction}', ?, ?, ?, 'failing', '2026-11-01T10:00:01.000Z')`,
        [
          configured,
          sealSecret('current-secret-0001', keyring, configured),
          sealSecret('previous-secret-001', keyring, configured),
          expiry,
        ],
      );
      await conn.execute(
        `insert into "webhook_endpoint" ("id", "organization_id", "url", "description", "enabled", "webhook_types", "contract_addresses",
           "shared_secret_sealed", "created_at", "updated_at")
         values (?, ?, 'https://hooks.example.com/other', 'warehouse', true, '{nft}', null, ?, '2026-11-02T10:00:00.000Z',
           '2026-11-02T10:00:00.000Z')`,
        [other, configured, sealSecret('other-secret-00001', keyring, configured)],
      );
      await orm.getMigrator().up();
    } finally {
      await orm.close(true);
    }

    const app = await createTestApp({ DATABASE_URL: databaseUrl });
    try {
      const admin = (await createApiKey(app, configured, ['admin'])).key;
      expect((await app.http().get(`${BASE}/webhook-config`).set(bearer(admin)).expect(200)).body).toEqual({
        url: 'https://hooks.example.com/legacy',
        enabled: false,
        webhookTypes: ['nft', 'transaction'],
        hasSharedSecret: true,
        previousSecretExpiresAtUtc: expect.any(String),
        updatedAtUtc: '2026-11-01T10:00:01.000000+00:00',
      });
      const endpoints = await app.http().get(`${BASE}/webhook-endpoints`).set(bearer(admin)).expect(200);
      expect(endpoints.body.endpoints).toEqual([
        expect.objectContaining({
          id: configured,
          isDefault: true,
          disabledReason: 'failing',
          createdAtUtc: '2026-11-01T10:00:00.000000+00:00',
          description: null,
          filters: { contractAddresses: null },
        }),
        expect.objectContaining({ id: other, isDefault: false, url: 'https://hooks.example.com/other', description: 'warehouse' }),
      ]);
      // The secrets still open where they are now, bound to the same organization.
      const targets = (await app.app.get(DeliveryTargetReader).endpoints([configured])).get(configured)!;
      expect(targets.map((target) => [target.endpointId, target.secret, target.previous?.secret ?? null])).toEqual([
        [configured, 'current-secret-0001', 'previous-secret-001'],
        [other, 'other-secret-00001', null],
      ]);

      const untouchedKey = (await createApiKey(app, untouched, ['admin'])).key;
      expect((await app.http().get(`${BASE}/webhook-config`).set(bearer(untouchedKey)).expect(200)).body).toEqual({
        url: null,
        enabled: false,
        webhookTypes: [],
        hasSharedSecret: false,
        previousSecretExpiresAtUtc: null,
        updatedAtUtc: '2026-11-01T10:00:00.000000+00:00',
      });
    } finally {
      await app.close();
    }
  });
});
