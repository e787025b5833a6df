import { MikroORM } from '@mikro-orm/postgresql';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import {
  AddedEndpoint,
  addEndpoint as addSuiteEndpoint,
  configureWebhooks,
  createWallet,
  ENDPOINTS_PATH,
  signatureIsValid,
  WEBHOOKS_PATH,
} from './support/webhooks';
import { uuid7Sql } from './support/nft';

const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];
const CONTRACT_A = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const CONTRACT_B = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Endpoint = AddedEndpoint;

describe('webhook endpoints: fan-out, filters, isolation, replay', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    // The contract's 3 s receiver timeout, so "before the first timeout" means what it says.
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

  const addEndpoint = (
    org: TestOrganization,
    path: string,
    body: { webhookTypes?: string[]; filters?: { contractAddresses: string[] }; enabled?: boolean } = {},
  ): Promise<Endpoint> => addSuiteEndpoint(t, org, receiver.urlFor(path), { webhookTypes: ALL_TYPES, ...body });
  const createToken = async (org: TestOrganization, contractAddress: string, blockchainTokenId: string): Promise<string> =>
    (await t.http().post('/v1/tokens').set(bearer(org.adminKey)).send({ contractAddress, blockchainTokenId }).expect(201)).body.id;
  const at = (path: string) => (w: ReceivedWebhook) => w.path === path;
  const log = async (org: TestOrganization, query = '') =>
    (await t.http().get(`${WEBHOOKS_PATH}${query}`).set(bearer(org.adminKey)).expect(200)).body.webhooks as Record<string, unknown>[];
  const sql = (text: string, params: unknown[] = []) => t.app.get(MikroORM).em.fork().getConnection().execute(text, params);

  it('sends one webhook per matching endpoint, each with its own id, secret and signature, sharing the event id', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.urlFor('/default'), sharedSecret: 'default-endpoint-secret-01' });
    const second = await addEndpoint(org, '/second');
    const nftOnly = await addEndpoint(org, '/nft-only', { webhookTypes: ['nft'] });

    const walletId = await createWallet(t, org);
    await receiver.waitFor((r) => r.filter(at('/default')).length === 1 && r.filter(at('/second')).length === 1);
    const [toDefault] = receiver.received.filter(at('/default'));
    const [toSecond] = receiver.received.filter(at('/second'));

    // The default endpoint is `/webhook-config`: its webhook has the event's id.
    expect(toDefault.body.id).toBe(toDefault.headers['x-service-webhook-event-id']);
    expect(toSecond.headers['x-service-webhook-event-id']).toBe(toDefault.body.id);
    expect(toSecond.body.id).toMatch(UUID_V7);
    expect(toSecond.body.id).not.toBe(toDefault.body.id);
    expect(toSecond.headers['x-service-webhook-id']).toBe(toSecond.body.id);
    expect(toSecond.headers['webhook-id']).toBe(toSecond.body.id);
    expect({ ...toSecond.body, id: null }).toEqual({ ...toDefault.body, id: null });
    expect(toSecond.body.resourceId).toBe(walletId);
    expect(signatureIsValid(toDefault, 'default-endpoint-secret-01')).toBe(true);
    expect(signatureIsValid(toSecond, second.secret)).toBe(true);
    expect(signatureIsValid(toSecond, 'default-endpoint-secret-01')).toBe(false);

    // The delivery log names each webhook's endpoint and event, and filters by endpoint.
    const entries = await waitUntil(
      () => log(org),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'succeeded'),
    );
    expect(entries.map((e) => [e.endpointId, e.eventId]).sort()).toEqual(
      [
        [org.id, toDefault.body.id],
        [second.id, toDefault.body.id],
      ].sort(),
    );
    expect((await log(org, `?endpointId=${second.id}`)).map((e) => e.id)).toEqual([toSecond.body.id]);
    expect((await log(org, `?endpointId=${nftOnly.id}`)).map((e) => e.id)).toEqual([]);
    const bad = await t.http().get(`${WEBHOOKS_PATH}?endpointId=not-a-uuid`).set(bearer(org.adminKey));
    expectProblem(bad, 400, 'VALIDATION_FAILED');

    // The nft-only endpoint gets the token's webhook, and only that.
    const tokenId = await createToken(org, CONTRACT_A, '1');
    await receiver.waitFor((r) => r.filter(at('/nft-only')).length === 1 && r.filter((w) => w.body.resourceId === tokenId).length === 3);
    expect(receiver.received.filter(at('/nft-only')).map((w) => w.body.resourceType)).toEqual(['Token']);
    expect(signatureIsValid(receiver.received.filter(at('/nft-only'))[0], nftOnly.secret)).toBe(true);
  });

  it('limits nft and transaction webhooks of a filtered endpoint to the listed contracts', async () => {
    const org = await createOrganization(t);
    const filtered = await addEndpoint(org, '/filtered', { filters: { contractAddresses: [CONTRACT_A.toLowerCase()] } });
    const everything = await addEndpoint(org, '/everything');
    const walletId = await createWallet(t, org);
    const tokenA = await createToken(org, CONTRACT_A, '7');
    const tokenB = await createToken(org, CONTRACT_B, '7');
    const mint = (tokenId: string) =>
      t.http().post('/v1/transactions').set(bearer(org.adminKey)).send({ tokenId, toWalletId: walletId, amount: '1' }).expect(201);
    const mintA = (await mint(tokenA)).body.id as string;
    const mintB = (await mint(tokenB)).body.id as string;
    await t
      .http()
      .patch(`/v1/tokens/${tokenB}`)
      .set(bearer(org.adminKey))
      .send({ metadata: { name: 'B' } })
      .expect(200);
    await t
      .http()
      .patch(`/v1/tokens/${tokenA}`)
      .set(bearer(org.adminKey))
      .send({ metadata: { name: 'A' } })
      .expect(200);

    // Everything reaches the unfiltered endpoint; the last event is a barrier for the filtered one.
    await receiver.waitFor((r) => r.filter(at('/everything')).length === 7);
    await receiver.waitFor((r) => r.some((w) => w.path === '/filtered' && w.body.action === 'update'));
    await waitUntil(
      () => log(org, `?endpointId=${filtered.id}`),
      (rows) => rows.length === 4 && rows.every((row) => row.status === 'succeeded'),
    );
    const toFiltered = receiver.received.filter(at('/filtered'));
    // The wallet (no token, so no contract to filter on) and contract A's token, mint and update.
    expect(toFiltered.map((w) => w.body.resourceId).sort()).toEqual([walletId, tokenA, mintA, tokenA].sort());
    expect(toFiltered.map((w) => w.body.resourceId)).not.toContain(tokenB);
    expect(toFiltered.map((w) => w.body.resourceId)).not.toContain(mintB);
    expect(everything.id).not.toBe(filtered.id);
  });

  it('sends nothing to a disabled endpoint, and disabling the default endpoint disables only it', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.urlFor('/default'), sharedSecret: 'default-endpoint-secret-02', enabled: false });
    const off = await addEndpoint(org, '/off', { enabled: false });
    await addEndpoint(org, '/on');
    await createWallet(t, org, 'first');
    await createWallet(t, org, 'second');
    await receiver.waitFor((r) => r.filter(at('/on')).length === 2);
    await waitUntil(
      () => sql('select count(*)::int as n from domain_event where organization_id = ? and processed_at is null', [org.id]),
      (rows) => rows[0].n === 0,
    );
    expect(receiver.received.filter((w) => w.path !== '/on')).toEqual([]);
    expect(await log(org, `?endpointId=${off.id}`)).toEqual([]);
  });

  it('never lets a dead endpoint delay a healthy one on the same host', async () => {
    const org = await createOrganization(t);
    const dead = await addEndpoint(org, '/dead');
    await addEndpoint(org, '/healthy');
    receiver.behaviour = (_n, webhook) => (webhook.path === '/dead' ? 'hang' : { status: 200 });
    const walletId = await createWallet(t, org);
    const tokenId = await createToken(org, CONTRACT_A, '99');
    await receiver.waitFor((r) => r.filter(at('/healthy')).length === 2);

    // Twenty events committed together: twenty webhooks to each endpoint at once.
    const batch = Array.from({ length: 20 }, () => ({ tokenId, toWalletId: walletId, amount: '1' }));
    await t.http().post('/v1/transactions/batch').set(bearer(org.adminKey)).send({ transactions: batch }).expect(201);
    await receiver.waitFor((r) => r.filter(at('/healthy')).length === 22, 20_000);

    // By then not one request to the dead endpoint has reached its 3 s timeout: none of its
    // attempts has a result yet, and the first of them is still within its 3 s.
    const finished = await sql(
      `select count(*)::int as n from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id
        where d.endpoint_id = ? and a.error like 'no answer within%'`,
      [dead.id],
    );
    expect(finished[0].n).toBe(0);
    const deadRequests = receiver.received.filter(at('/dead'));
    expect(deadRequests.length).toBeGreaterThan(0);
    const firstDead = Math.min(...deadRequests.map((w) => w.receivedAt));
    const lastHealthy = Math.max(...receiver.received.filter(at('/healthy')).map((w) => w.receivedAt));
    expect(lastHealthy - firstDead).toBeLessThan(3000);
  });

  it('replays failed webhooks by time window, endpoint and type, with their ids, audited', async () => {
    const org = await createOrganization(t);
    const flaky = await addEndpoint(org, '/flaky');
    const other = await addEndpoint(org, '/other');
    let failing = true;
    receiver.behaviour = (_n, webhook) => ({ status: failing && webhook.path === '/flaky' ? 500 : 200 });
    const since = new Date().toISOString();
    await createWallet(t, org, 'one');
    await createWallet(t, org, 'two');
    const failedIds = (
      await waitUntil(
        () => log(org, `?endpointId=${flaky.id}&status=failed`),
        (rows) => rows.length === 2,
      )
    ).map((row) => row.id as string);
    const before = receiver.received.length;

    // Nothing matches these filters: nothing is sent.
    const none = await t
      .http()
      .post(`${WEBHOOKS_PATH}/replay`)
      .set(bearer(org.adminKey))
      .send({ since, webhookTypes: ['nft'] })
      .expect(202);
    expect(none.body).toEqual({ count: 0 });

    failing = false;
    const res = await t.http().post(`${WEBHOOKS_PATH}/replay`).set(bearer(org.adminKey)).send({ since, endpointId: flaky.id }).expect(202);
    expect(res.body).toEqual({ count: 2 });
    await receiver.waitFor(
      (r) => r.slice(before).filter((w) => w.path === '/flaky' && w.headers['x-service-webhook-hmac'] !== undefined).length === 2,
    );
    const replayed = receiver.received.slice(before);
    expect(replayed.map((w) => w.body.id).sort()).toEqual([...failedIds].sort());
    expect(replayed.every((w) => signatureIsValid(w, flaky.secret))).toBe(true);
    await waitUntil(
      () => log(org, `?endpointId=${flaky.id}`),
      (rows) => rows.every((row) => row.status === 'succeeded'),
    );
    // `status: all` sends the succeeded ones again too; the other endpoint's, here.
    const all = await t
      .http()
      .post(`${WEBHOOKS_PATH}/replay`)
      .set(bearer(org.adminKey))
      .send({ since, status: 'all', endpointId: other.id })
      .expect(202);
    expect(all.body).toEqual({ count: 2 });

    const audit = await t.http().get('/api/organization/v1/current-organization/audit-log').set(bearer(org.adminKey)).expect(200);
    const replays = (audit.body.entries as { action: string; changes: Record<string, { to: unknown }> }[]).filter(
      (e) => e.action === 'webhook.replay',
    );
    expect(replays.map((e) => e.changes.count.to).sort()).toEqual([0, 2, 2]);
    expect(replays.some((e) => e.changes.endpointId.to === flaky.id)).toBe(true);
  });

  it('refuses a bad or too large replay and changes nothing', async () => {
    const org = await createOrganization(t);
    const endpoint = await addEndpoint(org, '/big');
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const post = (body: unknown, key = org.adminKey) =>
      t
        .http()
        .post(`${WEBHOOKS_PATH}/replay`)
        .set(bearer(key))
        .send(body as object);

    expectProblem(await post({}), 400, 'VALIDATION_FAILED');
    expectProblem(await post({ since: 'yesterday' }), 400, 'VALIDATION_FAILED');
    expectProblem(await post({ since, until: since }), 400, 'VALIDATION_FAILED');
    expectProblem(await post({ since, status: 'pending' }), 400, 'VALIDATION_FAILED');
    expectProblem(await post({ since, webhookTypes: ['nope'] }), 400, 'VALIDATION_FAILED');
    expectProblem(await post({ since, surprise: true }), 400, 'VALIDATION_FAILED');
    expectProblem(await post({ since, endpointId: '01a20000-0000-7000-8000-00000000abcd' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    // Past the 30-day retention nothing is kept to replay.
    const outside = await post({ since: new Date(Date.now() - 31 * 86_400_000).toISOString() });
    expectProblem(outside, 422, 'OUTSIDE_RETENTION');
    expect(outside.body.detail).toMatch(/kept for 30 days/);
    const auditor = await createApiKey(t, org.id, ['auditor']);
    expectProblem(await post({ since }, auditor.key), 403, 'FORBIDDEN');

    // 10,001 failed webhooks: one more than a replay may send.
    await sql(
      `insert into webhook_delivery (id, event_id, endpoint_id, created_at, organization_id, webhook_type, resource_type, resource_id,
         action, payload, event_created_at, status, attempt_count, cycle_start_attempt)
       select id, id, ?, now() - interval '1 minute', ?, 'nft', 'Token', id, 'create', '{}', now(), 'failed', 4, 0
         from (select ${uuid7Sql()} as id from generate_series(1, 10001)) g`,
      [endpoint.id, org.id],
    );
    const tooLarge = await post({ since });
    expectProblem(tooLarge, 422, 'REPLAY_TOO_LARGE');
    const stillFailed = await sql(`select count(*)::int as n from webhook_delivery where organization_id = ? and status = 'failed'`, [
      org.id,
    ]);
    expect(stillFailed[0].n).toBe(10001);
    expect(receiver.received).toEqual([]);
  });

  it('redelivers and test-sends per endpoint, each signed with its own secret', async () => {
    const org = await createOrganization(t);
    const endpoint = await addEndpoint(org, '/mine', { webhookTypes: ['kyc'] });
    const test = await t.http().post(`${ENDPOINTS_PATH}/${endpoint.id}/test`).set(bearer(org.adminKey)).send({}).expect(202);
    const [sent] = await receiver.waitFor((r) => r.length === 1);
    expect(sent.path).toBe('/mine');
    expect(sent.body).toEqual(expect.objectContaining({ id: test.body.id, resourceType: 'WebhookTest', action: 'test' }));
    expect(signatureIsValid(sent, endpoint.secret)).toBe(true);
    const entry = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${test.body.id}`).set(bearer(org.adminKey)).expect(200),
      (res) => res.body.status === 'succeeded',
    );
    expect(entry.body).toEqual(expect.objectContaining({ endpointId: endpoint.id, eventId: test.body.id }));

    await t.http().post(`${WEBHOOKS_PATH}/${test.body.id}/redeliver`).set(bearer(org.adminKey)).expect(202);
    const [, again] = await receiver.waitFor((r) => r.length === 2);
    expect(again.path).toBe('/mine');
    expect(again.body.id).toBe(test.body.id);
    expect(signatureIsValid(again, endpoint.secret)).toBe(true);

    expectProblem(
      await t.http().post(`${ENDPOINTS_PATH}/01a20000-0000-7000-8000-00000000abcd/test`).set(bearer(org.adminKey)).send({}),
      404,
      'WEBHOOK_ENDPOINT_NOT_FOUND',
    );
  });

  it("stops a deleted endpoint's pending webhooks", async () => {
    const org = await createOrganization(t);
    const doomed = await addEndpoint(org, '/doomed');
    // The first attempt hangs until its timeout; the endpoint is deleted meanwhile.
    receiver.behaviour = () => 'hang';
    await createWallet(t, org);
    await receiver.waitFor((r) => r.length >= 1);
    await t.http().delete(`${ENDPOINTS_PATH}/${doomed.id}`).set(bearer(org.adminKey)).expect(204);
    const deletedAt = Date.now();
    const [webhook] = await waitUntil(
      () => log(org, `?endpointId=${doomed.id}`),
      (rows) => rows[0]?.status === 'failed',
    );
    const detail = await t
      .http()
      .get(`${WEBHOOKS_PATH}/${webhook.id as string}`)
      .set(bearer(org.adminKey))
      .expect(200);
    expect(detail.body.attempts.at(-1).error).toMatch(/endpoint was deleted/);
    // No request reached the receiver after the deletion (allowing for one already in flight).
    expect(receiver.received.filter((w) => w.receivedAt > deletedAt + 500)).toEqual([]);
    expectProblem(
      await t
        .http()
        .post(`${WEBHOOKS_PATH}/${webhook.id as string}/redeliver`)
        .set(bearer(org.adminKey)),
      422,
      'WEBHOOK_ENDPOINT_DELETED',
    );
  });
});
