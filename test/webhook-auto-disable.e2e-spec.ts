import { bearer, createOrganization, TestOrganization } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet, WEBHOOKS_PATH } from './support/webhooks';

const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const TYPES = ['custodialAccount'];

describe('webhook endpoints: auto-disable after sustained failure', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    // A short window: an endpoint whose every attempt failed for 2 s (with at least ten failed
    // webhooks) is switched off by the next reconcile pass.
    t = await createTestApp({
      WEBHOOK_AUTO_DISABLE_AFTER: '2s',
      WEBHOOK_RECONCILE_INTERVAL: '200ms',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
    });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  const addEndpoint = async (org: TestOrganization, path: string): Promise<string> =>
    (
      await t
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({ url: receiver.urlFor(path), sharedSecret: 'auto-disable-secret-0123456789', webhookTypes: TYPES })
        .expect(201)
    ).body.id;
  const endpoint = async (org: TestOrganization, id: string) =>
    (await t.http().get(`${ENDPOINTS_PATH}/${id}`).set(bearer(org.adminKey)).expect(200)).body as Record<string, unknown>;
  const failedWebhooks = (org: TestOrganization, endpointId: string) =>
    waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?endpointId=${endpointId}&status=failed`).set(bearer(org.adminKey)).expect(200),
      (res) => res.body.webhooks.length >= 10,
    );

  it('disables an endpoint whose every attempt failed for the window, audits it, and lets PATCH re-enable it', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.urlFor('/healthy'), sharedSecret: 'healthy-default-secret-01', webhookTypes: TYPES });
    const failing = await addEndpoint(org, '/failing');
    let broken = true;
    receiver.behaviour = (_n, webhook) => ({ status: broken && webhook.path === '/failing' ? 500 : 200 });
    for (let i = 0; i < 12; i += 1) await createWallet(t, org, `wallet ${i}`);
    await failedWebhooks(org, failing);

    const disabled = await waitUntil(
      () => endpoint(org, failing),
      (body) => body.enabled === false,
      10_000,
    );
    expect(disabled).toEqual(expect.objectContaining({ enabled: false, disabledReason: 'failing' }));
    // Only that endpoint: the healthy default endpoint is untouched.
    const config = await t.http().get(CONFIG_PATH).set(bearer(org.adminKey)).expect(200);
    expect(config.body.enabled).toBe(true);

    const audit = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).expect(200);
    const entry = (audit.body.entries as Record<string, unknown>[]).find((e) => e.action === 'webhookEndpoint.autoDisable');
    expect(entry).toBeDefined();
    expect(entry?.apiKeyId ?? null).toBeNull();
    expect(JSON.stringify(entry)).toContain(failing);

    // A disabled endpoint gets no new webhooks; the healthy one still does.
    const before = receiver.received.filter((w) => w.path === '/failing').length;
    const walletId = await createWallet(t, org, 'after disabling');
    await receiver.waitFor((r) => r.some((w) => w.path === '/healthy' && w.body.resourceId === walletId));
    expect(receiver.received.filter((w) => w.path === '/failing')).toHaveLength(before);

    // PATCH re-enables it and clears the reason; its failed webhooks stay replayable.
    broken = false;
    const patched = await t.http().patch(`${ENDPOINTS_PATH}/${failing}`).set(bearer(org.adminKey)).send({ enabled: true }).expect(200);
    expect(patched.body).toEqual(expect.objectContaining({ enabled: true, disabledReason: null }));
    const since = new Date(Date.now() - 600_000).toISOString();
    const replay = await t
      .http()
      .post(`${WEBHOOKS_PATH}/replay`)
      .set(bearer(org.adminKey))
      .send({ since, endpointId: failing })
      .expect(202);
    expect(replay.body.count).toBeGreaterThanOrEqual(10);
    await receiver.waitFor((r) => r.filter((w) => w.path === '/failing').length >= before + replay.body.count);
    await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?endpointId=${failing}&status=failed`).set(bearer(org.adminKey)).expect(200),
      (res) => res.body.webhooks.length === 0,
    );
    // Succeeding again, it is not disabled by the passes that follow.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await endpoint(org, failing)).toEqual(expect.objectContaining({ enabled: true, disabledReason: null }));
  });

  it('disables the default endpoint like any other, and only it', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.urlFor('/default'), sharedSecret: 'failing-default-secret-01', webhookTypes: TYPES });
    const other = await addEndpoint(org, '/other');
    receiver.behaviour = (_n, webhook) => ({ status: webhook.path === '/default' ? 503 : 200 });
    for (let i = 0; i < 11; i += 1) await createWallet(t, org, `wallet ${i}`);
    await failedWebhooks(org, org.id);
    const config = await waitUntil(
      () => t.http().get(CONFIG_PATH).set(bearer(org.adminKey)).expect(200),
      (res) => res.body.enabled === false,
      10_000,
    );
    expect(config.body.enabled).toBe(false);
    expect(await endpoint(org, org.id)).toEqual(expect.objectContaining({ isDefault: true, enabled: false, disabledReason: 'failing' }));
    expect(await endpoint(org, other)).toEqual(expect.objectContaining({ enabled: true, disabledReason: null }));
  });

  it('leaves an endpoint alone while fewer than ten webhooks failed, however long', async () => {
    const org = await createOrganization(t);
    const endpointId = await addEndpoint(org, '/few');
    receiver.behaviour = () => ({ status: 500 });
    for (let i = 0; i < 4; i += 1) await createWallet(t, org, `wallet ${i}`);
    await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?endpointId=${endpointId}&status=failed`).set(bearer(org.adminKey)).expect(200),
      (res) => res.body.webhooks.length === 4,
    );
    // Several reconcile passes past the window.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await endpoint(org, endpointId)).toEqual(expect.objectContaining({ enabled: true, disabledReason: null }));
  });
});
