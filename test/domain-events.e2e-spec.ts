import { createOrganization, expectProblem, TestOrganization } from './support/factories';
import { eventCount, eventsFor, newAddress, nftApi, sql, UNKNOWN_ID } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The transactional outbox seen from the database: every committed write has exactly its event
 * row (docs/WEBHOOKS.md "How delivery stays reliable"), and a refused or failed write leaves none.
 */
describe('domain events of wallet, token and transaction writes', () => {
  let t: TestApp;
  let org: TestOrganization;
  let api: ReturnType<typeof nftApi>;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    api = nftApi(t, org.adminKey);
  });
  afterAll(async () => {
    await t.close();
  });

  async function expectOneEvent(
    resourceId: string,
    expected: { webhookType: string; resourceType: string; action: string; changes: unknown },
    since: Date,
  ) {
    const events = await eventsFor(t, resourceId);
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toEqual(
      expect.objectContaining({
        organization_id: org.id,
        webhook_type: expected.webhookType,
        resource_type: expected.resourceType,
        resource_id: resourceId,
        action: expected.action,
        changes: expected.changes,
      }),
    );
    expect(new Date(event.created_at).getTime()).toBeGreaterThanOrEqual(since.getTime() - 1);
    expect(new Date(event.created_at).getTime()).toBeLessThanOrEqual(Date.now() + 1);
  }

  it('POST /v1/wallets commits custodialAccount / Wallet / create', async () => {
    const since = new Date();
    const wallet = await api.wallet({ name: 'evented' });
    await expectOneEvent(wallet.id, { webhookType: 'custodialAccount', resourceType: 'Wallet', action: 'create', changes: null }, since);
  });

  it('POST /v1/tokens commits nft / Token / create', async () => {
    const since = new Date();
    const token = await api.token({ metadata: { name: 'x' } });
    await expectOneEvent(token.id, { webhookType: 'nft', resourceType: 'Token', action: 'create', changes: null }, since);
  });

  it('PATCH /v1/tokens/{id} commits nft / Token / update with the changed fields', async () => {
    const token = await api.token({ metadata: { name: 'before', editionId: 3 } });
    await t
      .http()
      .patch(`/v1/tokens/${token.id}`)
      .set(api.auth)
      .send({ metadata: { name: 'after', editionId: 3, image: 'ipfs://cid' } })
      .expect(200);
    // The image's fetch ends with an update of its own (`changes.media`, test/media.e2e-spec.ts), whenever it ends.
    const events = (await eventsFor(t, token.id)).filter(
      (e) => !(e.changes !== null && typeof e.changes === 'object' && 'media' in e.changes),
    );
    expect(events.map((e) => e.action)).toEqual(['create', 'update']);
    expect(events[1]).toEqual(
      expect.objectContaining({ webhook_type: 'nft', resource_type: 'Token', changes: { name: 'after', image: 'ipfs://cid' } }),
    );
  });

  it('POST /v1/transactions commits transaction / Transaction / create, for mint, transfer and burn', async () => {
    const [a, b] = [await api.wallet(), await api.wallet()];
    const token = await api.token();
    const since = new Date();
    const moves = [
      await api.mint(token.id, a.id, '2'),
      await api.move({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id }),
      await api.move({ tokenId: token.id, fromWalletId: b.id }),
    ];
    for (const move of moves) {
      await expectOneEvent(move.id, { webhookType: 'transaction', resourceType: 'Transaction', action: 'create', changes: null }, since);
    }
  });

  it('every event names a resource that its GET returns', async () => {
    const own = await createOrganization(t);
    const ownApi = nftApi(t, own.adminKey);
    const wallet = await ownApi.wallet();
    const token = await ownApi.token();
    await ownApi.mint(token.id, wallet.id);
    const events = await sql<{ resource_type: string; resource_id: string }>(
      t,
      'select resource_type, resource_id from domain_event where organization_id = ? order by id',
      [own.id],
    );
    expect(events.map((e) => e.resource_type)).toEqual(['Wallet', 'Token', 'Transaction']);
    const paths: Record<string, string> = { Wallet: '/v1/wallets/', Token: '/v1/tokens/', Transaction: '/v1/transactions/' };
    for (const event of events) {
      const res = await t
        .http()
        .get(paths[event.resource_type] + event.resource_id)
        .set(ownApi.auth)
        .expect(200);
      expect(res.body.id).toBe(event.resource_id);
    }
  });

  describe('a refused write leaves no event', () => {
    it('409 duplicate token: the event staged with the insert rolls back with it', async () => {
      const contract = newAddress();
      await api.token({ contractAddress: contract, blockchainTokenId: '9' });
      const before = await eventCount(t, org.id);
      const res = await t.http().post('/v1/tokens').set(api.auth).send({ contractAddress: contract, blockchainTokenId: '9' });
      expectProblem(res, 409, 'TOKEN_ALREADY_EXISTS');
      expect(await eventCount(t, org.id)).toBe(before);
    });

    it('422 insufficient balance, 422 reused idempotency key, 404 unknown parties, 400 invalid bodies', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '1');
      await t
        .http()
        .post('/v1/transactions')
        .set(api.auth)
        .set('idempotency-key', 'ev-key')
        .send({ tokenId: token.id, toWalletId: b.id })
        .expect(201);
      const before = await eventCount(t, org.id);

      const post = (body: Record<string, unknown>) => t.http().post('/v1/transactions').set(api.auth).send(body);
      expectProblem(await post({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '5' }), 422, 'INSUFFICIENT_BALANCE');
      expectProblem(
        await t
          .http()
          .post('/v1/transactions')
          .set(api.auth)
          .set('idempotency-key', 'ev-key')
          .send({ tokenId: token.id, toWalletId: a.id }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
      expectProblem(await post({ tokenId: token.id, toWalletId: UNKNOWN_ID }), 404, 'WALLET_NOT_FOUND');
      expectProblem(await post({ tokenId: UNKNOWN_ID, toWalletId: a.id }), 404, 'TOKEN_NOT_FOUND');
      expectProblem(await post({ tokenId: token.id }), 400, 'VALIDATION_FAILED');
      expectProblem(await t.http().post('/v1/wallets').set(api.auth).send({ address: 'nope' }), 400, 'VALIDATION_FAILED');
      expectProblem(
        await t
          .http()
          .patch(`/v1/tokens/${UNKNOWN_ID}`)
          .set(api.auth)
          .send({ metadata: { name: 'x' } }),
        404,
        'TOKEN_NOT_FOUND',
      );
      expectProblem(
        await t.http().post('/v1/tokens').set(api.auth).send({ contractAddress: newAddress(), blockchainTokenId: '-1' }),
        400,
        'VALIDATION_FAILED',
      );

      expect(await eventCount(t, org.id)).toBe(before);
    });

    it('an idempotent replay adds no event', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const send = () =>
        t
          .http()
          .post('/v1/transactions')
          .set(api.auth)
          .set('idempotency-key', 'ev-replay')
          .send({ tokenId: token.id, toWalletId: wallet.id });
      await send().expect(201);
      const before = await eventCount(t, org.id);
      await send().expect(201);
      await send().expect(201);
      expect(await eventCount(t, org.id)).toBe(before);
    });
  });

  it('under concurrency, events match committed transactions one for one', async () => {
    const sender = await api.wallet();
    const receiver = await api.wallet();
    const token = await api.token();
    await api.mint(token.id, sender.id, '10');
    const results = await Promise.all(
      Array.from({ length: 25 }, () =>
        t.http().post('/v1/transactions').set(api.auth).send({ tokenId: token.id, fromWalletId: sender.id, toWalletId: receiver.id }),
      ),
    );
    const committed = results.filter((r) => r.status === 201).map((r) => r.body.id as string);
    expect(committed).toHaveLength(10);
    const rows = await sql<{ resource_id: string }>(
      t,
      `select e.resource_id from domain_event e join nft_transaction x on x.id = e.resource_id where x.from_wallet_id = ?`,
      [sender.id],
    );
    expect(rows.map((r) => r.resource_id).sort()).toEqual([...committed].sort());
    const [orphans] = await sql<{ n: string }>(
      t,
      `select count(*)::text as n from domain_event e where e.resource_type = 'Transaction' and e.organization_id = ?
         and not exists (select 1 from nft_transaction x where x.id = e.resource_id)`,
      [org.id],
    );
    expect(orphans.n).toBe('0');
  });
});
