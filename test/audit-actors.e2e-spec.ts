import { WebhookEndpointsService } from '../src/modules/webhook-endpoints/webhook-endpoints.service';
import { bearer, createApiKey } from './support/factories';
import { newAddress } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

const ORG = '/api/organization/v1/current-organization';
const AUDIT_PATH = `${ORG}/audit-log`;

interface Entry {
  action: string;
  apiKeyId: string | null;
  keyPrefix: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
}

/**
 * Every audited action, done once by an organization's key (a second admin key, so the entries
 * cannot be confused with the key that set the organization up), once by the operator where the
 * operator may do it, and once by the service itself: each entry names exactly who acted.
 */
describe('audit entries name the actor', () => {
  let t: TestApp;
  const receiver = new TestReceiver();

  beforeAll(async () => {
    await receiver.start();
    // Sends are limited per organization; this walk is about actors, not limits.
    t = await createTestApp({ WEBHOOK_SENDS_PER_ORGANIZATION: '0' });
  });

  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const entries = async (key: string): Promise<Entry[]> =>
    (await t.http().get(AUDIT_PATH).set(bearer(key)).query({ pageSize: 1000 }).expect(200)).body.entries as Entry[];

  it('records the acting API key id and its 13-character prefix for every write an organization key makes', async () => {
    const org = (await t.http().post('/admin/v1/organizations').set(bearer(OPERATOR_KEY)).send({ name: 'Audit actors' }).expect(201)).body;
    const setup = await createApiKey(t, org.id, ['admin'], 'setup');
    const actor = await createApiKey(t, org.id, ['admin'], 'actor');
    expect(actor.keyPrefix).toBe(actor.key.slice(0, 13));
    const as = bearer(actor.key);
    const before = new Date(Date.now() - 60_000).toISOString();

    // apiKey.create and apiKey.revoke by the organization's own admin key.
    const minted = (
      await t
        .http()
        .post(`${ORG}/api-keys`)
        .set(as)
        .send({ name: 'minted', roles: ['read'] })
        .expect(201)
    ).body;
    await t.http().delete(`${ORG}/api-keys/${minted.id}`).set(as).expect(204);

    // The contract whitelist.
    const contract = newAddress();
    await t.http().patch(`${ORG}/nft-whitelist`).set(as).send({ enabled: true }).expect(200);
    await t
      .http()
      .post(`${ORG}/nft-whitelist/contracts`)
      .set(as)
      .send({ contractAddresses: [contract] })
      .expect((res) => expect([200, 201]).toContain(res.status));
    await t.http().delete(`${ORG}/nft-whitelist/contracts/${contract}`).set(as).expect(204);

    // The default endpoint (webhook configuration), a test webhook, a redelivery and a replay.
    await t
      .http()
      .patch(`${ORG}/webhook-config`)
      .set(as)
      .send({ url: receiver.url, sharedSecret: 'audit-actors-secret-0001', webhookTypes: ['nft'], enabled: true })
      .expect(200);
    await t.http().post(`${ORG}/webhook-config/rotate-secret`).set(as).send({}).expect(200);
    const sent = (await t.http().post(`${ORG}/webhook-config/test`).set(as).send({}).expect(202)).body;
    await receiver.waitFor((r) => r.some((w) => w.body.id === sent.id));
    await waitUntil(
      async () => (await t.http().get(`${ORG}/webhooks/${sent.id}`).set(as).expect(200)).body,
      (webhook) => webhook.status === 'succeeded',
    );
    await t.http().post(`${ORG}/webhooks/${sent.id}/redeliver`).set(as).expect(202);
    await waitUntil(
      async () => (await t.http().get(`${ORG}/webhooks/${sent.id}`).set(as).expect(200)).body,
      (webhook) => webhook.status === 'succeeded',
    );
    await t.http().post(`${ORG}/webhooks/replay`).set(as).send({ since: before, status: 'all' }).expect(202);

    // A second endpoint, through its whole life.
    const endpoint = (
      await t
        .http()
        .post(`${ORG}/webhook-endpoints`)
        .set(as)
        .send({ url: receiver.urlFor('/second'), webhookTypes: ['nft'], sharedSecret: 'audit-actors-secret-0002' })
        .expect(201)
    ).body;
    await t.http().patch(`${ORG}/webhook-endpoints/${endpoint.id}`).set(as).send({ description: 'second' }).expect(200);
    await t.http().post(`${ORG}/webhook-endpoints/${endpoint.id}/rotate-secret`).set(as).send({}).expect(200);
    await t.http().post(`${ORG}/webhook-endpoints/${endpoint.id}/test`).set(as).send({}).expect(202);
    await t.http().delete(`${ORG}/webhook-endpoints/${endpoint.id}`).set(as).expect(204);

    const byKey = (await entries(setup.key)).filter((e) => e.apiKeyId === actor.id);
    const expected = [
      'apiKey.create',
      'apiKey.revoke',
      'nftWhitelist.update',
      'nftWhitelist.contracts.add',
      'nftWhitelist.contracts.delete',
      'webhookConfig.update',
      'webhookConfig.rotateSecret',
      'webhook.test',
      'webhook.redeliver',
      'webhook.replay',
      'webhookEndpoint.create',
      'webhookEndpoint.update',
      'webhookEndpoint.rotateSecret',
      'webhookEndpoint.delete',
    ];
    expect([...new Set(byKey.map((e) => e.action))].sort()).toEqual([...expected].sort());
    for (const entry of byKey)
      expect({ action: entry.action, keyPrefix: entry.keyPrefix }).toEqual({ action: entry.action, keyPrefix: actor.keyPrefix });
    // Nothing the acting key did is recorded without it, or under another key.
    const all = await entries(setup.key);
    const anonymous = all.filter((e) => e.apiKeyId === null);
    expect(anonymous.map((e) => e.keyPrefix).sort()).toEqual(['operator', 'operator', 'operator']);
    expect(all.filter((e) => e.apiKeyId !== null && e.apiKeyId !== actor.id)).toEqual([]);
  });

  it('records the operator as "operator" and the service as "system", with no key', async () => {
    const org = (await t.http().post('/admin/v1/organizations').set(bearer(OPERATOR_KEY)).send({ name: 'Audit actors 2' }).expect(201))
      .body;
    const admin = await createApiKey(t, org.id, ['admin']);
    const spare = await createApiKey(t, org.id, ['read']);
    await t.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${spare.id}`).set(bearer(OPERATOR_KEY)).expect(204);
    await t
      .http()
      .patch(`${ORG}/webhook-config`)
      .set(bearer(admin.key))
      .send({ url: receiver.urlFor('/system'), sharedSecret: 'audit-actors-secret-0003', webhookTypes: ['nft'], enabled: true })
      .expect(200);
    await t.app.get(WebhookEndpointsService).disableFailingEndpoints([{ organizationId: org.id, endpointId: org.id }], new Date());

    const list = await entries(admin.key);
    const who = (action: string) => list.filter((e) => e.action === action).map((e) => ({ apiKeyId: e.apiKeyId, keyPrefix: e.keyPrefix }));
    expect(who('organization.create')).toEqual([{ apiKeyId: null, keyPrefix: 'operator' }]);
    expect(who('apiKey.create')).toEqual([
      { apiKeyId: null, keyPrefix: 'operator' },
      { apiKeyId: null, keyPrefix: 'operator' },
    ]);
    expect(who('apiKey.revoke')).toEqual([{ apiKeyId: null, keyPrefix: 'operator' }]);
    expect(who('webhookConfig.update')).toEqual([{ apiKeyId: admin.id, keyPrefix: admin.keyPrefix }]);
    expect(who('webhookEndpoint.autoDisable')).toEqual([{ apiKeyId: null, keyPrefix: 'system' }]);
  });
});
