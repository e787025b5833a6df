import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { eventCount, eventsFor, nftApi, sql, UNKNOWN_ID, UTC_TIMESTAMP, UUID_V7 } from './support/nft';
import { TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, signatureIsValid } from './support/webhooks';

const BATCH = '/v1/transactions/batch';
const UINT256_MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
const SECRET = 'batch-receiver-secret-0001';

describe('transactions: POST /v1/transactions/batch', () => {
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

  const postBatch = (transactions: unknown, headers: Record<string, string> = {}, key = org.adminKey) =>
    t.http().post(BATCH).set(bearer(key)).set(headers).send({ transactions });

  /** Everything a refused batch must leave untouched. */
  async function snapshot(walletIds: string[]) {
    const [txCount] = await sql<{ n: string }>(t, 'select count(*)::text as n from nft_transaction where organization_id = ?', [org.id]);
    const balances = await Promise.all(walletIds.map((w) => api.allBalances(w)));
    return { transactions: txCount.n, events: await eventCount(t, org.id), balances };
  }

  describe('success', () => {
    it('applies movements in request order, each seeing the balances the earlier ones left', async () => {
      const [a, b, c] = [await api.wallet(), await api.wallet(), await api.wallet()];
      const token = await api.token();
      const items = [
        { tokenId: token.id, toWalletId: a.id, amount: '5' },
        { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '3' },
        { tokenId: token.id, fromWalletId: b.id, toWalletId: c.id, amount: '2' },
        { tokenId: token.id, fromWalletId: c.id, amount: '1' },
        { tokenId: token.id, toWalletId: c.id },
      ];
      const res = await postBatch(items).expect(201);
      expect(Object.keys(res.body)).toEqual(['transactions']);
      const recorded = res.body.transactions as Record<string, unknown>[];
      expect(recorded.map((tx) => [tx.type, tx.fromWalletId, tx.toWalletId, tx.amount])).toEqual([
        ['nftMint', null, a.id, '5'],
        ['nftTransfer', a.id, b.id, '3'],
        ['nftTransfer', b.id, c.id, '2'],
        ['nftBurn', c.id, null, '1'],
        ['nftMint', null, c.id, '1'],
      ]);
      for (const tx of recorded) {
        expect(tx).toEqual({
          id: expect.stringMatching(UUID_V7),
          organizationId: org.id,
          type: expect.any(String),
          tokenId: token.id,
          fromWalletId: tx.fromWalletId,
          toWalletId: tx.toWalletId,
          amount: tx.amount,
          source: 'api',
          status: 'confirmed',
          chain: null,
          createdAtUtc: expect.stringMatching(UTC_TIMESTAMP),
        });
        // Each item is its own transaction, readable like any other.
        expect(
          (
            await t
              .http()
              .get(`/v1/transactions/${tx.id as string}`)
              .set(api.auth)
              .expect(200)
          ).body,
        ).toEqual(tx);
        const events = await eventsFor(t, tx.id as string);
        expect(events.map((e) => [e.webhook_type, e.resource_type, e.action, e.changes])).toEqual([
          ['transaction', 'Transaction', 'create', null],
        ]);
      }
      // Ids sort in request order, so listings show the batch as sent.
      expect([...recorded.map((tx) => tx.id)].sort()).toEqual(recorded.map((tx) => tx.id));
      expect(await api.amountOf(a.id, token.id)).toBe('2');
      expect(await api.amountOf(b.id, token.id)).toBe('1');
      expect(await api.amountOf(c.id, token.id)).toBe('2');
    });

    it('accepts ids in any case, like the single endpoint, and moves several tokens at once', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const [x, y] = [await api.token(), await api.token()];
      await api.mint(x.id, a.id, '4');
      const res = await postBatch([
        { tokenId: x.id.toUpperCase(), fromWalletId: a.id.toUpperCase(), toWalletId: b.id, amount: '4' },
        { tokenId: y.id, toWalletId: a.id, amount: '7' },
        { tokenId: y.id, fromWalletId: a.id, toWalletId: b.id, amount: '7' },
      ]).expect(201);
      expect(res.body.transactions[0].tokenId).toBe(x.id);
      expect(await api.allBalances(a.id)).toEqual([]);
      expect((await api.allBalances(b.id)).map((h) => [h.tokenId, h.amount])).toEqual(
        [
          [x.id, '4'],
          [y.id, '7'],
        ].sort((p, q) => (p[0] < q[0] ? -1 : 1)),
      );
    });

    it('records a batch of 1,000 items, and every item reaches the receiver as its own signed webhook', async () => {
      const receiver = await new TestReceiver().start();
      try {
        const hooked = await createOrganization(t);
        const theirs = nftApi(t, hooked.adminKey);
        await configureWebhooks(t, hooked, { url: receiver.url, sharedSecret: SECRET, webhookTypes: ['transaction'] });
        const wallets = [await theirs.wallet(), await theirs.wallet()];
        const tokens = await Promise.all(Array.from({ length: 4 }, () => theirs.token()));
        const items = Array.from({ length: 1000 }, (_, i) => ({ tokenId: tokens[i % 4].id, toWalletId: wallets[i % 2].id }));
        const res = await t.http().post(BATCH).set(bearer(hooked.adminKey)).send({ transactions: items }).expect(201);
        const ids: string[] = res.body.transactions.map((tx: { id: string }) => tx.id);
        expect(new Set(ids).size).toBe(1000);

        const expected = new Set(ids);
        const received = await receiver.waitFor(
          (r) => new Set(r.map((w) => w.body.resourceId).filter((id) => expected.has(id as string))).size === 1000,
          120_000,
        );
        const mine = received.filter((w) => expected.has(w.body.resourceId as string));
        expect(
          mine.every((w) => w.body.resourceType === 'Transaction' && w.body.action === 'create' && w.body.organizationId === hooked.id),
        ).toBe(true);
        expect(mine.every((w) => signatureIsValid(w, SECRET))).toBe(true);
        // Each item has its own webhook id; at-least-once delivery may repeat one, never merge two.
        expect(new Set(mine.map((w) => w.body.id)).size).toBe(1000);
        expect((await theirs.allBalances(wallets[0].id)).map((h) => h.amount)).toEqual(['250', '250']);
      } finally {
        await receiver.stop();
      }
    }, 180_000);
  });

  describe('validation: every bad item is listed by index, nothing is recorded', () => {
    it('400 VALIDATION_FAILED listing every malformed item with {index, field, message}', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const before = await snapshot([wallet.id]);
      const res = await postBatch([
        { tokenId: token.id, toWalletId: wallet.id },
        { tokenId: 'not-a-uuid', toWalletId: wallet.id },
        { tokenId: token.id, toWalletId: wallet.id },
        { tokenId: token.id },
        { tokenId: token.id, toWalletId: wallet.id, surprise: true },
        42,
        { tokenId: token.id, toWalletId: wallet.id, amount: '0' },
        { tokenId: token.id, fromWalletId: wallet.id, toWalletId: wallet.id },
      ]);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      const errors = res.body.errors as { index: number; field: string; message: string }[];
      for (const error of errors)
        expect(error).toEqual({ index: expect.any(Number), field: expect.any(String), message: expect.any(String) });
      expect([...new Set(errors.map((e) => e.index))]).toEqual([1, 3, 4, 5, 6, 7]);
      expect(errors.filter((e) => e.index === 1).map((e) => e.field)).toEqual(['tokenId']);
      expect(errors.filter((e) => e.index === 3).map((e) => e.field)).toEqual(['fromWalletId', 'toWalletId']);
      expect(errors.filter((e) => e.index === 4).map((e) => e.field)).toEqual(['surprise']);
      expect(errors.filter((e) => e.index === 6).map((e) => e.field)).toEqual(['amount']);
      expect(errors.filter((e) => e.index === 7).map((e) => e.field)).toEqual(['toWalletId']);
      expect(await snapshot([wallet.id])).toEqual(before);
    });

    it('400 for a missing, empty, oversized or non-array list, and for unknown top-level fields', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const item = { tokenId: token.id, toWalletId: wallet.id };
      const before = await snapshot([wallet.id]);
      expectProblem(await t.http().post(BATCH).set(api.auth).send({}), 400, 'VALIDATION_FAILED');
      expectProblem(await postBatch([]), 400, 'VALIDATION_FAILED');
      expectProblem(await postBatch(Array.from({ length: 1001 }, () => item)), 400, 'VALIDATION_FAILED');
      expectProblem(await postBatch(item), 400, 'VALIDATION_FAILED');
      expectProblem(
        await t
          .http()
          .post(BATCH)
          .set(api.auth)
          .send({ transactions: [item], extra: 1 }),
        400,
        'VALIDATION_FAILED',
      );
      expect(await snapshot([wallet.id])).toEqual(before);
    });
  });

  describe('refusal: the first refused movement answers alone, nothing is recorded', () => {
    it('422 INSUFFICIENT_BALANCE with the index of the first movement that overdraws', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '2');
      const before = await snapshot([a.id, b.id]);
      const res = await postBatch([
        { tokenId: token.id, toWalletId: a.id, amount: '1' },
        { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '3' },
        // Would also fail, but only the first refusal is answered.
        { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '3' },
        { tokenId: token.id, fromWalletId: b.id, amount: '9' },
      ]);
      expectProblem(res, 422, 'INSUFFICIENT_BALANCE');
      expect(res.body.errors).toEqual([{ index: 2, field: 'amount', message: expect.stringContaining(a.id) }]);
      expect(await snapshot([a.id, b.id])).toEqual(before);
    });

    it('422 BALANCE_OVERFLOW at the movement that would pass 2^256-1, nothing recorded', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '5');
      const before = await snapshot([a.id, b.id]);
      // Credits only (written while locking) and a total no column can hold.
      const credits = await postBatch([
        { tokenId: token.id, toWalletId: b.id, amount: UINT256_MAX },
        { tokenId: token.id, toWalletId: a.id, amount: '1' },
        { tokenId: token.id, toWalletId: b.id, amount: UINT256_MAX },
      ]);
      expectProblem(credits, 422, 'BALANCE_OVERFLOW');
      expect(credits.body.errors).toEqual([{ index: 2, field: 'amount', message: expect.any(String) }]);
      // An existing row pushed over by a later credit.
      const existing = await postBatch([
        { tokenId: token.id, toWalletId: b.id },
        { tokenId: token.id, toWalletId: a.id, amount: UINT256_MAX },
      ]);
      expectProblem(existing, 422, 'BALANCE_OVERFLOW');
      expect(existing.body.errors[0].index).toBe(1);
      expect(await snapshot([a.id, b.id])).toEqual(before);
    });

    it("404 for an unknown or another organization's token or wallet, with its index", async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const other = await createOrganization(t);
      const theirs = nftApi(t, other.adminKey);
      const [theirWallet, theirToken] = [await theirs.wallet(), await theirs.token()];
      const ok = { tokenId: token.id, toWalletId: wallet.id };
      const before = await snapshot([wallet.id]);

      const unknownToken = await postBatch([ok, ok, { tokenId: UNKNOWN_ID, toWalletId: wallet.id }]);
      expectProblem(unknownToken, 404, 'TOKEN_NOT_FOUND');
      expect(unknownToken.body.errors).toEqual([{ index: 2, field: 'tokenId', message: expect.any(String) }]);

      const foreignToken = await postBatch([ok, { tokenId: theirToken.id, toWalletId: wallet.id }]);
      expectProblem(foreignToken, 404, 'TOKEN_NOT_FOUND');
      expect(foreignToken.body.errors[0].index).toBe(1);

      const foreignWallet = await postBatch([ok, { tokenId: token.id, fromWalletId: wallet.id, toWalletId: theirWallet.id }]);
      expectProblem(foreignWallet, 404, 'WALLET_NOT_FOUND');
      expect(foreignWallet.body.errors).toEqual([{ index: 1, field: 'toWalletId', message: expect.any(String) }]);

      expect(await snapshot([wallet.id])).toEqual(before);
      expect(await theirs.allBalances(theirWallet.id)).toEqual([]);
    });

    it('concurrent batches never overdraw: of two that each need more than half, exactly one is recorded', async () => {
      const [a, b, c] = [await api.wallet(), await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '5');
      const spend = (to: string) => Array.from({ length: 3 }, () => ({ tokenId: token.id, fromWalletId: a.id, toWalletId: to }));
      const answers = await Promise.all([postBatch(spend(b.id)), postBatch(spend(c.id))]);
      expect(answers.map((r) => r.status).sort()).toEqual([201, 422]);
      const refused = answers.find((r) => r.status === 422)!;
      expectProblem(refused, 422, 'INSUFFICIENT_BALANCE');
      expect(refused.body.errors[0].index).toBe(2);
      expect(await api.amountOf(a.id, token.id)).toBe('2');
      const [held] = await sql<{ n: string }>(t, 'select sum(amount)::text as n from balance where token_id = ?', [token.id]);
      expect(held.n).toBe('5');
    });

    it('batches and single movements running together over the same rows never fail or lose a unit', async () => {
      const wallets = [await api.wallet(), await api.wallet(), await api.wallet()];
      const token = await api.token();
      for (const w of wallets) await api.mint(token.id, w.id, '50');
      const [a, b, c] = wallets.map((w) => w.id);
      const move = (from: string, to: string) => ({ tokenId: token.id, fromWalletId: from, toWalletId: to });
      const answers = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) =>
          postBatch(i % 2 ? [move(c, a), move(b, c), move(a, b)] : [move(a, c), move(c, b), move(b, a)]),
        ),
        ...Array.from({ length: 8 }, (_, i) =>
          t
            .http()
            .post('/v1/transactions')
            .set(api.auth)
            .send(i % 2 ? move(c, a) : move(a, c)),
        ),
      ]);
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
      const [held] = await sql<{ n: string }>(t, 'select sum(amount)::text as n from balance where token_id = ?', [token.id]);
      expect(held.n).toBe('150');
    });
  });

  describe('Idempotency-Key covers the whole batch', () => {
    it('the same key and items return the first answer and record nothing new', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      const items = [
        { tokenId: token.id, toWalletId: a.id, amount: '2' },
        { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id },
      ];
      const first = await postBatch(items, { 'idempotency-key': 'batch-001' }).expect(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const after = await snapshot([a.id, b.id]);
      // An omitted amount and "1" are the same request.
      const again = await postBatch([items[0], { ...items[1], amount: '1' }], { 'idempotency-key': 'batch-001' }).expect(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await snapshot([a.id, b.id])).toEqual(after);
    });

    it('422 IDEMPOTENCY_KEY_REUSED for the same key with different items (or another order), changing nothing', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      const items = [
        { tokenId: token.id, toWalletId: a.id },
        { tokenId: token.id, toWalletId: b.id },
      ];
      await postBatch(items, { 'idempotency-key': 'batch-002' }).expect(201);
      const before = await snapshot([a.id, b.id]);
      expectProblem(await postBatch([items[1], items[0]], { 'idempotency-key': 'batch-002' }), 422, 'IDEMPOTENCY_KEY_REUSED');
      expectProblem(await postBatch([items[0]], { 'idempotency-key': 'batch-002' }), 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(await snapshot([a.id, b.id])).toEqual(before);
    });

    it('a refused batch leaves the key free, and a bad key is a 400', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      const items = [{ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id }];
      expectProblem(await postBatch(items, { 'idempotency-key': 'batch-003' }), 422, 'INSUFFICIENT_BALANCE');
      await api.mint(token.id, a.id, '1');
      const ok = await postBatch(items, { 'idempotency-key': 'batch-003' }).expect(201);
      expect((await postBatch(items, { 'idempotency-key': 'batch-003' }).expect(201)).body).toEqual(ok.body);
      expect(await api.amountOf(b.id, token.id)).toBe('1');
      expectProblem(await postBatch(items, { 'idempotency-key': 'has space' }), 400, 'INVALID_IDEMPOTENCY_KEY');
    });
  });

  it('is documented in the OpenAPI document with its request and response schemas', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body;
    const op = doc.paths[BATCH].post;
    expect(op.summary).toEqual(expect.any(String));
    expect(op.security).toEqual([{ apiKey: [] }]);
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['201', '400', '404', '422']));
    const schemas = doc.components.schemas;
    expect(op.requestBody.content['application/json'].schema.$ref).toMatch(/CreateTransactionBatchRequestDto$/);
    expect(schemas.CreateTransactionBatchRequestDto.properties.transactions).toEqual(
      expect.objectContaining({
        type: 'array',
        minItems: 1,
        maxItems: 1000,
        items: { $ref: '#/components/schemas/CreateTransactionRequestDto' },
      }),
    );
    expect(schemas.TransactionBatchDto.properties.transactions.items.$ref).toBe('#/components/schemas/TransactionDto');
  });

  it('needs the write role', async () => {
    const wallet = await api.wallet();
    const token = await api.token();
    const readKey = await createApiKey(t, org.id, ['read']);
    expectProblem(await postBatch([{ tokenId: token.id, toWalletId: wallet.id }], {}, readKey.key), 403, 'FORBIDDEN');
    expect(await api.allBalances(wallet.id)).toEqual([]);
  });
});
