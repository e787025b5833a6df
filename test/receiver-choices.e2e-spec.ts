import { WebhookEndpointsService } from '../src/modules/webhook-endpoints/webhook-endpoints.service';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { addEndpoint as addSuiteEndpoint, configureWebhooks, ENDPOINTS_PATH, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';

const CONTRACT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const ENVELOPE = ['organizationId', 'action', 'id', 'resourceId', 'resourceType', 'createdAtUtc', 'changes'];

/** `{a: {b: {…: leaf}}}` along the given keys. */
const nested = (keys: string[], leaf: unknown): object => keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf) as object;

describe('receivers choose what they get: full bodies, content filters, retry schedules, operational events', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' });
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

  const addEndpoint = (org: TestOrganization, path: string, body: Record<string, unknown>) =>
    addSuiteEndpoint(t, org, receiver.urlFor(path), body);
  const at = (path: string) => (w: ReceivedWebhook) => w.path === path;
  /** Every body received validates against the schema GET /v1/event-types serves for its (webhookType, resourceType). */
  const expectCatalogued = async (org: TestOrganization, webhooks: ReceivedWebhook[]) => {
    const { eventTypes } = (await get(org, '/v1/event-types')) as {
      eventTypes: { webhookType: string; resourceType: string; schema: Record<string, unknown> }[];
    };
    for (const webhook of webhooks) {
      const type = webhook.headers['x-service-webhook-type'] ?? null;
      const candidates = eventTypes.filter(
        (e) => e.resourceType === webhook.body.resourceType && (type === null || e.webhookType === type),
      );
      expect(candidates.length).toBeGreaterThan(0);
      const results = candidates.map((entry) => {
        const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
        addFormats(ajv);
        const validate = ajv.compile(entry.schema);
        return validate(webhook.body) ? null : validate.errors;
      });
      expect([webhook.body.resourceType, webhook.body.action, results.some((r) => r === null) ? null : results]).toEqual([
        webhook.body.resourceType,
        webhook.body.action,
        null,
      ]);
    }
  };
  const get = async (org: TestOrganization, path: string) => (await t.http().get(path).set(bearer(org.adminKey)).expect(200)).body;
  const log = async (org: TestOrganization, query: string) =>
    (await get(org, `${WEBHOOKS_PATH}?${query}`)).webhooks as { id: string; status: string; resourceType: string }[];
  const patchEndpoint = (org: TestOrganization, id: string, body: object) =>
    t.http().patch(`${ENDPOINTS_PATH}/${id}`).set(bearer(org.adminKey)).send(body);

  it('takes payload, filter and retrySchedule on endpoints, shows them, and refuses bad ones with 400 naming the field', async () => {
    const org = await createOrganization(t);
    const plain = await addEndpoint(org, '/plain', { webhookTypes: ['nft'] });
    expect(await get(org, `${ENDPOINTS_PATH}/${plain.id}`)).toEqual(
      expect.objectContaining({ payload: 'thin', filter: null, retrySchedule: null }),
    );

    const refusals: [object, string][] = [
      [{ payload: 'fat' }, 'payload'],
      [{ filter: 'action == create' }, 'filter'],
      [{ filter: { $or: [{ action: 'create' }, { action: { $foo: 1 } }] } }, 'filter.$or[1].action.$foo'],
      [{ filter: { data: { amount: { $gt: '5' } } } }, 'filter.data.amount.$gt'],
      [{ filter: nested('abcdefghijk'.split(''), 1) }, 'filter.a.b.c.d.e.f.g.h.i.j.k'],
      [{ filter: { $in: Array.from({ length: 120 }, (_, i) => i) } }, 'filter'],
      [{ retrySchedule: [] }, 'retrySchedule'],
      [{ retrySchedule: [0] }, 'retrySchedule'],
      [{ retrySchedule: [86_401] }, 'retrySchedule'],
      [{ retrySchedule: Array.from({ length: 21 }, () => 1) }, 'retrySchedule'],
    ];
    for (const [body, field] of refusals) {
      const res = await patchEndpoint(org, plain.id, body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContainEqual(
        expect.stringMatching(new RegExp(`^${field.replace(/[$.[\]]/g, '\\$&')}`)),
      );
    }
    // Nothing of the refused requests was stored.
    expect(await get(org, `${ENDPOINTS_PATH}/${plain.id}`)).toEqual(
      expect.objectContaining({ payload: 'thin', filter: null, retrySchedule: null }),
    );
    const created = await t
      .http()
      .post(ENDPOINTS_PATH)
      .set(bearer(org.adminKey))
      .send({ url: receiver.urlFor('/x'), webhookTypes: ['nft'], filter: { action: { $bad: 1 } } });
    expectProblem(created, 400, 'VALIDATION_FAILED');
    expect((await get(org, ENDPOINTS_PATH)).endpoints).toHaveLength(2);

    const filter = { resourceType: 'Token', $or: [{ action: 'create' }, { changes: { name: { $exist: true } } }] };
    const changed = await patchEndpoint(org, plain.id, { payload: 'full', filter, retrySchedule: [10, 60, 600] }).expect(200);
    expect(changed.body).toEqual(expect.objectContaining({ payload: 'full', filter, retrySchedule: [10, 60, 600] }));
    expect(await get(org, `${ENDPOINTS_PATH}/${plain.id}`)).toEqual(
      expect.objectContaining({ payload: 'full', filter, retrySchedule: [10, 60, 600] }),
    );
    await patchEndpoint(org, plain.id, { filter: null, retrySchedule: null, payload: 'thin' }).expect(200);

    // The default endpoint takes payload and retrySchedule, not a filter.
    expectProblem(await patchEndpoint(org, org.id, { filter: { action: 'create' } }), 422, 'DEFAULT_ENDPOINT');
    const byDefault = await patchEndpoint(org, org.id, { payload: 'full', retrySchedule: [5] }).expect(200);
    expect(byDefault.body).toEqual(expect.objectContaining({ payload: 'full', filter: null, retrySchedule: [5] }));
  });

  it('answers whether a filter matches an event with the code delivery uses, and 400 for an invalid filter', async () => {
    const org = await createOrganization(t);
    const event = {
      webhookType: 'nft',
      resourceType: 'Token',
      action: 'update',
      changes: { name: 'Vault 7' },
      data: { metadata: { name: 'Vault 7' } },
    };
    const test = (filter: unknown) => t.http().post(`${ENDPOINTS_PATH}/filter-test`).set(bearer(org.adminKey)).send({ filter, event });
    expect((await test({ data: { metadata: { name: { $startsWith: 'Vault' } } } }).expect(200)).body).toEqual({ matches: true });
    expect((await test({ action: { $in: ['create', 'delete'] } }).expect(200)).body).toEqual({ matches: false });
    expect((await test({ organizationId: { $exist: false } }).expect(200)).body).toEqual({ matches: true });
    const invalid = await test({ $or: [{ action: 'x' }, { action: { $foo: 1 } }] });
    expectProblem(invalid, 400, 'VALIDATION_FAILED');
    expect(invalid.body.errors).toEqual([expect.objectContaining({ field: 'filter.$or[1].action.$foo' })]);
  });

  it('sends full bodies with the resource as its GET answers, keeps thin bodies as they were, and signs both', async () => {
    const org = await createOrganization(t);
    const full = await addEndpoint(org, '/full', { webhookTypes: ['custodialAccount', 'nft', 'transaction'], payload: 'full' });
    const thin = await addEndpoint(org, '/thin', { webhookTypes: ['custodialAccount', 'nft', 'transaction'] });

    // Each step's webhooks arrive before the next change, so each body shows the resource as GET answered right after it.
    const answers = new Map<string, unknown>();
    const step = async (count: number, path: string): Promise<void> => {
      await receiver.waitFor((r) => r.filter(at('/full')).length === count && r.filter(at('/thin')).length === count);
      answers.set(receiver.received.filter(at('/full'))[count - 1].body.id as string, await get(org, path));
    };
    const wallet = (await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'Vault 7' }).expect(201)).body;
    await step(1, `/v1/wallets/${wallet.id}`);
    const token = (
      await t.http().post('/v1/tokens').set(bearer(org.adminKey)).send({ contractAddress: CONTRACT, blockchainTokenId: '7' }).expect(201)
    ).body;
    await step(2, `/v1/tokens/${token.id}`);
    await t
      .http()
      .patch(`/v1/tokens/${token.id}`)
      .set(bearer(org.adminKey))
      .send({ metadata: { name: 'Seven' } })
      .expect(200);
    await step(3, `/v1/tokens/${token.id}`);
    const transaction = (
      await t
        .http()
        .post('/v1/transactions')
        .set(bearer(org.adminKey))
        .send({ tokenId: token.id, toWalletId: wallet.id, amount: '1' })
        .expect(201)
    ).body;
    await step(4, `/v1/transactions/${transaction.id}`);
    expect(receiver.received.filter(at('/full')).map((w) => `${w.body.resourceType as string} ${w.body.action as string}`)).toEqual([
      'Wallet create',
      'Token create',
      'Token update',
      'Transaction create',
    ]);

    for (const webhook of receiver.received.filter(at('/full'))) {
      expect(Object.keys(webhook.body)).toEqual([...ENVELOPE, 'data']);
      expect(webhook.body.data).toEqual(answers.get(webhook.body.id as string));
      expect(signatureIsValid(webhook, full.secret)).toBe(true);
    }
    await expectCatalogued(org, receiver.received);
    for (const webhook of receiver.received.filter(at('/thin'))) {
      expect(Object.keys(webhook.body)).toEqual(ENVELOPE);
      expect(signatureIsValid(webhook, thin.secret)).toBe(true);
    }
    // The body is fixed when the webhook is made: the log and a redelivery carry the same bytes.
    const sent = receiver.received.filter(at('/full'))[0];
    const entry = await get(org, `${WEBHOOKS_PATH}/${sent.body.id as string}`);
    expect(entry.payload).toEqual(sent.body);
    await t
      .http()
      .post(`${WEBHOOKS_PATH}/${sent.body.id as string}/redeliver`)
      .set(bearer(org.adminKey))
      .expect(202);
    await receiver.waitFor((r) => r.filter((w) => w.body.id === sent.body.id).length === 2);
    expect(receiver.byId(sent.body.id as string)[1].raw.equals(sent.raw)).toBe(true);

    // A test webhook to a full endpoint carries data null.
    await t.http().post(`${ENDPOINTS_PATH}/${full.id}/test`).set(bearer(org.adminKey)).send({ webhookType: 'nft' }).expect(202);
    const [testWebhook] = await receiver.waitFor((r) => r.some((w) => w.path === '/full' && w.body.resourceType === 'WebhookTest'));
    expect(receiver.received.find((w) => w.path === '/full' && w.body.resourceType === 'WebhookTest')?.body.data).toBeNull();
    expect(testWebhook).toBeDefined();
  });

  it('makes no webhook for an event its filter does not match: nothing in the log, the contract filter still applies', async () => {
    const org = await createOrganization(t);
    const vip = await addEndpoint(org, '/vip', {
      webhookTypes: ['custodialAccount', 'nft'],
      filter: {
        $or: [
          { resourceType: 'Wallet', data: { name: { $startsWith: 'vip-' } } },
          { resourceType: 'Token', action: 'create' },
        ],
      },
      filters: { contractAddresses: [CONTRACT] },
    });
    const everything = await addEndpoint(org, '/all', { webhookTypes: ['custodialAccount', 'nft'] });
    for (const name of ['vip-1', 'regular', 'vip-2'])
      await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name }).expect(201);
    const other = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
    await t.http().post('/v1/tokens').set(bearer(org.adminKey)).send({ contractAddress: other, blockchainTokenId: '1' }).expect(201);
    await t.http().post('/v1/tokens').set(bearer(org.adminKey)).send({ contractAddress: CONTRACT, blockchainTokenId: '1' }).expect(201);
    await receiver.waitFor((r) => r.filter(at('/all')).length === 5 && r.filter(at('/vip')).length === 3);
    // Whatever is still in flight has had its chance to arrive.
    await waitUntil(
      () => log(org, `endpointId=${everything.id}`),
      (entries) => entries.every((e) => e.status === 'succeeded') && entries.length === 5,
    );
    const toVip = receiver.received.filter(at('/vip')).map((w) => w.body.resourceType);
    expect(toVip.sort()).toEqual(['Token', 'Wallet', 'Wallet']);
    expect(await log(org, `endpointId=${vip.id}`)).toHaveLength(3);
  });

  it('retries on the endpoint schedule, then tells the other endpoints it failed, was exhausted, recovered, and was switched', async () => {
    const org = await createOrganization(t);
    let failing = true;
    receiver.behaviour = (_n, webhook) => (webhook.path === '/flaky' && failing ? { status: 500 } : { status: 200 });
    const flaky = await addEndpoint(org, '/flaky', { webhookTypes: ['custodialAccount', 'operational'], retrySchedule: [1, 1, 1, 1, 1] });
    await addEndpoint(org, '/ops', { webhookTypes: ['operational'], payload: 'full' });
    await configureWebhooks(t, org, {
      url: receiver.urlFor('/default'),
      sharedSecret: 'default-endpoint-secret-01',
      webhookTypes: ['custodialAccount'],
    });

    const wallet = (await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'w' }).expect(201)).body;
    const ops = () => receiver.received.filter(at('/ops')).map((w) => w.body);
    const opsOf = (resourceType: string, action: string) => ops().filter((b) => b.resourceType === resourceType && b.action === action);
    // 5 delays: 6 attempts, the webhook then failed and `exhausted` sent; `failing` at the 5th failure, once.
    await receiver.waitFor(() => opsOf('Webhook', 'exhausted').length === 1, 30_000);
    // (The default endpoint's switch on, an `operational` `enabled` event, fails at /flaky too: an operational webhook raises no `exhausted`.)
    const attempts = receiver.received.filter((w) => w.path === '/flaky' && w.body.resourceType === 'Wallet');
    expect(attempts).toHaveLength(6);
    for (let i = 1; i < attempts.length; i += 1) expect(attempts[i].receivedAt - attempts[i - 1].receivedAt).toBeGreaterThanOrEqual(900);
    const [exhausted] = opsOf('Webhook', 'exhausted');
    expect(exhausted.changes).toEqual({ endpointId: flaky.id });
    const failedEntry = exhausted.data as { id: string; status: string; attempts: unknown[]; payload: { resourceId: string } };
    expect(failedEntry.status).toBe('failed');
    expect(failedEntry.attempts).toHaveLength(6);
    expect(failedEntry.payload.resourceId).toBe(wallet.id);
    expect(exhausted.data).toEqual(await get(org, `${WEBHOOKS_PATH}/${failedEntry.id}`));
    await receiver.waitFor(() => opsOf('WebhookEndpoint', 'failing').length === 1);
    const [failingEvent] = opsOf('WebhookEndpoint', 'failing');
    expect(failingEvent).toEqual(expect.objectContaining({ resourceId: flaky.id, changes: null }));
    expect((failingEvent.data as { id: string }).id).toBe(flaky.id);

    // The first success after `failing`: `recovered`, once.
    failing = false;
    await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'second' }).expect(201);
    await receiver.waitFor(() => opsOf('WebhookEndpoint', 'recovered').length === 1, 30_000);

    // Switched off and on by PATCH; a PATCH that keeps `enabled` sends nothing.
    await patchEndpoint(org, flaky.id, { enabled: false }).expect(200);
    await receiver.waitFor(() => opsOf('WebhookEndpoint', 'disabled').length === 1);
    await patchEndpoint(org, flaky.id, { enabled: false, description: 'still off' }).expect(200);
    await patchEndpoint(org, flaky.id, { enabled: true }).expect(200);
    await receiver.waitFor(() => opsOf('WebhookEndpoint', 'enabled').length === 1);
    expect(opsOf('WebhookEndpoint', 'disabled')[0].changes).toEqual({ enabled: false, disabledReason: null });
    expect(opsOf('WebhookEndpoint', 'enabled')[0].changes).toEqual({ enabled: true, disabledReason: null });
    expect((opsOf('WebhookEndpoint', 'enabled')[0].data as { enabled: boolean }).enabled).toBe(true);

    // Never to the endpoint an operational event is about (/flaky does get the one about the default endpoint); once
    // each; none to the default endpoint, which does not subscribe to them.
    expect(receiver.received.some((w) => w.path === '/flaky' && w.body.resourceId === org.id && w.body.action === 'enabled')).toBe(true);
    await waitUntil(
      () => log(org, 'webhookType=operational'),
      (entries) => entries.every((e) => e.status !== 'pending'),
    );
    expect(
      receiver.received
        .filter(at('/flaky'))
        .some((w) => w.body.resourceId === flaky.id || (w.body.changes as { endpointId?: string } | null)?.endpointId === flaky.id),
    ).toBe(false);
    expect(opsOf('WebhookEndpoint', 'failing')).toHaveLength(1);
    expect(opsOf('Webhook', 'exhausted')).toHaveLength(1);
    expect(receiver.received.filter(at('/default')).every((w) => w.body.resourceType === 'Wallet')).toBe(true);
    // Operational bodies, thin (/flaky) and full (/ops), are in the event catalogue.
    await expectCatalogued(org, receiver.received);
  });

  it('tells the other endpoints when the service switches a failing endpoint off', async () => {
    const org = await createOrganization(t);
    const doomed = await addEndpoint(org, '/doomed', { webhookTypes: ['operational'] });
    await addEndpoint(org, '/ops', { webhookTypes: ['operational'] });
    const switchedOff = await t.app
      .get(WebhookEndpointsService)
      .disableFailingEndpoints([{ organizationId: org.id, endpointId: doomed.id }], new Date());
    expect(switchedOff).toHaveLength(1);
    await receiver.waitFor((r) => r.some((w) => w.path === '/ops' && w.body.action === 'disabled'));
    const disabled = receiver.received.find((w) => w.path === '/ops' && w.body.action === 'disabled')!;
    expect(disabled.body).toEqual(
      expect.objectContaining({
        resourceType: 'WebhookEndpoint',
        resourceId: doomed.id,
        changes: { enabled: false, disabledReason: 'failing' },
      }),
    );
    expect(receiver.received.filter(at('/doomed'))).toHaveLength(0);
  });
});
