import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { eventCount, eventsFor, nftApi, sql, UNKNOWN_ID, UTC_TIMESTAMP, UUID_V7 } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

const UINT256_MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

describe('transactions: POST /v1/transactions and GET /v1/transactions/{transactionId}', () => {
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

  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http().post('/v1/transactions').set(api.auth).set(headers).send(body);

  /** Everything a refused request must leave untouched. */
  async function snapshot(walletIds: string[]) {
    const [txCount] = await sql<{ n: string }>(t, 'select count(*)::text as n from nft_transaction where organization_id = ?', [org.id]);
    const balances = await Promise.all(walletIds.map((w) => api.allBalances(w)));
    return { transactions: txCount.n, events: await eventCount(t, org.id), balances };
  }

  describe('mint, transfer and burn', () => {
    it('mints with amount defaulting to "1" and answers the transaction shape', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const res = await post({ tokenId: token.id, toWalletId: wallet.id }).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(
        [
          'amount',
          'chain',
          'createdAtUtc',
          'fromWalletId',
          'id',
          'organizationId',
          'source',
          'status',
          'toWalletId',
          'tokenId',
          'type',
        ].sort(),
      );
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID_V7),
        organizationId: org.id,
        type: 'nftMint',
        tokenId: token.id,
        fromWalletId: null,
        toWalletId: wallet.id,
        amount: '1',
        source: 'api',
        status: 'confirmed',
        chain: null,
        createdAtUtc: expect.stringMatching(UTC_TIMESTAMP),
      });
      expect(await api.allBalances(wallet.id)).toEqual([expect.objectContaining({ tokenId: token.id, amount: '1' })]);
      expect((await t.http().get(`/v1/transactions/${res.body.id}`).set(api.auth).expect(200)).body).toEqual(res.body);
    });

    it('transfers and burns, moving exact amounts', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '10');
      const transfer = await post({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '4' }).expect(201);
      expect(transfer.body).toEqual(expect.objectContaining({ type: 'nftTransfer', fromWalletId: a.id, toWalletId: b.id, amount: '4' }));
      const burn = await post({ tokenId: token.id, fromWalletId: b.id, amount: '3' }).expect(201);
      expect(burn.body).toEqual(expect.objectContaining({ type: 'nftBurn', fromWalletId: b.id, toWalletId: null, amount: '3' }));
      expect(await api.amountOf(a.id, token.id)).toBe('6');
      expect(await api.amountOf(b.id, token.id)).toBe('1');
      for (const tx of [transfer.body, burn.body]) {
        expect((await t.http().get(`/v1/transactions/${tx.id}`).set(api.auth).expect(200)).body).toEqual(tx);
      }
    });

    it('a balance taken to zero disappears from the wallet', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '2');
      await post({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '2' }).expect(201);
      expect(await api.allBalances(a.id)).toEqual([]);
      await post({ tokenId: token.id, fromWalletId: b.id, amount: '2' }).expect(201);
      expect(await api.allBalances(b.id)).toEqual([]);
    });

    it('handles uint256 amounts beyond double precision exactly, and refuses to go past 2^256-1', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, UINT256_MAX);
      expect(await api.amountOf(a.id, token.id)).toBe(UINT256_MAX);
      await post({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '9007199254740993' }).expect(201);
      expect(await api.amountOf(b.id, token.id)).toBe('9007199254740993');
      expect(await api.amountOf(a.id, token.id)).toBe((BigInt(UINT256_MAX) - 9007199254740993n).toString());

      await api.mint(token.id, b.id, (BigInt(UINT256_MAX) - 9007199254740993n).toString());
      expect(await api.amountOf(b.id, token.id)).toBe(UINT256_MAX);
      const before = await snapshot([a.id, b.id]);
      expectProblem(await post({ tokenId: token.id, toWalletId: b.id, amount: '1' }), 422, 'BALANCE_OVERFLOW');
      expect(await snapshot([a.id, b.id])).toEqual(before);
    });
  });

  describe('refusals change nothing', () => {
    it('422 INSUFFICIENT_BALANCE for a transfer or burn above the balance (or with no balance at all)', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '3');
      const before = await snapshot([a.id, b.id]);
      expectProblem(await post({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '4' }), 422, 'INSUFFICIENT_BALANCE');
      expectProblem(await post({ tokenId: token.id, fromWalletId: a.id, amount: '4' }), 422, 'INSUFFICIENT_BALANCE');
      expectProblem(await post({ tokenId: token.id, fromWalletId: b.id, toWalletId: a.id }), 422, 'INSUFFICIENT_BALANCE');
      expect(await snapshot([a.id, b.id])).toEqual(before);
      // Exactly the balance is allowed.
      await post({ tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '3' }).expect(201);
    });

    it.each([
      ['neither wallet', {}, ['fromWalletId', 'toWalletId']],
      ['the same wallet on both sides', { self: true }, ['toWalletId']],
      ['amount "0"', { amount: '0' }, ['amount']],
      ['a negative amount', { amount: '-1' }, ['amount']],
      ['a numeric amount', { amount: 1 }, ['amount']],
      ['a fractional amount', { amount: '1.5' }, ['amount']],
      ['an amount with a leading zero', { amount: '01' }, ['amount']],
      ['an amount above 2^256-1', { amount: '115792089237316195423570985008687907853269984665640564039457584007913129639936' }, ['amount']],
      ['a tokenId that is not a UUID', { tokenId: 'abc' }, ['tokenId']],
      ['a wallet id that is not a UUID', { toWalletId: 'abc' }, ['toWalletId']],
      ['an unknown field', { memo: 'hi' }, ['memo']],
    ])('400 VALIDATION_FAILED for %s', async (_label, shape, fields) => {
      const wallet = await api.wallet();
      const token = await api.token();
      await api.mint(token.id, wallet.id, '5');
      const { self, ...override } = shape as Record<string, unknown>;
      const body: Record<string, unknown> = { tokenId: token.id, ...override };
      if (self) Object.assign(body, { fromWalletId: wallet.id, toWalletId: wallet.id });
      else if (!('toWalletId' in override) && Object.keys(shape).length > 0) body.fromWalletId = wallet.id;
      const before = await snapshot([wallet.id]);
      const res = await post(body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(fields));
      expect(await snapshot([wallet.id])).toEqual(before);
    });

    it('404 TOKEN_NOT_FOUND and WALLET_NOT_FOUND for unknown ids', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      await api.mint(token.id, wallet.id, '1');
      const before = await snapshot([wallet.id]);
      expectProblem(await post({ tokenId: UNKNOWN_ID, toWalletId: wallet.id }), 404, 'TOKEN_NOT_FOUND');
      expectProblem(await post({ tokenId: token.id, toWalletId: UNKNOWN_ID }), 404, 'WALLET_NOT_FOUND');
      expectProblem(await post({ tokenId: token.id, fromWalletId: UNKNOWN_ID, toWalletId: wallet.id }), 404, 'WALLET_NOT_FOUND');
      expectProblem(await post({ tokenId: token.id, fromWalletId: wallet.id, toWalletId: UNKNOWN_ID }), 404, 'WALLET_NOT_FOUND');
      expect(await snapshot([wallet.id])).toEqual(before);
    });
  });

  describe('tenant isolation', () => {
    it("another organization's token, wallets and transactions answer 404 like unknown ids and are never touched", async () => {
      const other = await createOrganization(t);
      const theirs = nftApi(t, other.adminKey);
      const [theirWallet, theirToken] = [await theirs.wallet(), await theirs.token()];
      const theirMint = await theirs.mint(theirToken.id, theirWallet.id, '5');
      const [mine, myToken] = [await api.wallet(), await api.token()];
      await api.mint(myToken.id, mine.id, '5');
      const before = await snapshot([mine.id]);

      expectProblem(await post({ tokenId: theirToken.id, toWalletId: mine.id }), 404, 'TOKEN_NOT_FOUND');
      expectProblem(await post({ tokenId: myToken.id, toWalletId: theirWallet.id }), 404, 'WALLET_NOT_FOUND');
      expectProblem(await post({ tokenId: theirToken.id, fromWalletId: theirWallet.id, toWalletId: mine.id }), 404, 'TOKEN_NOT_FOUND');
      expectProblem(await post({ tokenId: myToken.id, fromWalletId: mine.id, toWalletId: theirWallet.id }), 404, 'WALLET_NOT_FOUND');
      expectProblem(await t.http().get(`/v1/transactions/${theirMint.id}`).set(api.auth), 404, 'TRANSACTION_NOT_FOUND');

      expect(await snapshot([mine.id])).toEqual(before);
      expect(await theirs.allBalances(theirWallet.id)).toEqual([expect.objectContaining({ tokenId: theirToken.id, amount: '5' })]);
    });

    it('GET: 404 TRANSACTION_NOT_FOUND for an unknown id, 400 for a bad one', async () => {
      expectProblem(await t.http().get(`/v1/transactions/${UNKNOWN_ID}`).set(api.auth), 404, 'TRANSACTION_NOT_FOUND');
      expectProblem(await t.http().get('/v1/transactions/123').set(api.auth), 400, 'INVALID_PATH_PARAMETER');
    });

    it('roles: write records, read gets; each refused the other way; no key is a 401', async () => {
      const reader = (await createApiKey(t, org.id, ['read'])).key;
      const writer = (await createApiKey(t, org.id, ['write'])).key;
      const [wallet, token] = [await api.wallet(), await api.token()];
      const created = await t
        .http()
        .post('/v1/transactions')
        .set(bearer(writer))
        .send({ tokenId: token.id, toWalletId: wallet.id })
        .expect(201);
      expectProblem(
        await t.http().post('/v1/transactions').set(bearer(reader)).send({ tokenId: token.id, toWalletId: wallet.id }),
        403,
        'FORBIDDEN',
      );
      await t.http().get(`/v1/transactions/${created.body.id}`).set(bearer(reader)).expect(200);
      expectProblem(await t.http().get(`/v1/transactions/${created.body.id}`).set(bearer(writer)), 403, 'FORBIDDEN');
      expectProblem(await t.http().get(`/v1/transactions/${created.body.id}`), 401, 'UNAUTHENTICATED');
    });
  });

  describe('concurrency', () => {
    it('60 concurrent transfers from a wallet holding 37 never overdraw it', async () => {
      const sender = await api.wallet();
      const receivers = [await api.wallet(), await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, sender.id, '37');

      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          post({ tokenId: token.id, fromWalletId: sender.id, toWalletId: receivers[i % receivers.length].id }),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(37);
      expect(statuses.filter((s) => s === 422)).toHaveLength(23);
      results.filter((r) => r.status === 422).forEach((r) => expect(r.body.code).toBe('INSUFFICIENT_BALANCE'));

      expect(await api.amountOf(sender.id, token.id)).toBe('0');
      const received = await Promise.all(receivers.map((r) => api.amountOf(r.id, token.id)));
      expect(received.reduce((sum, amount) => sum + Number(amount), 0)).toBe(37);
      const perReceiver = receivers.map((r) => results.filter((res) => res.status === 201 && res.body.toWalletId === r.id).length);
      expect(received.map(Number)).toEqual(perReceiver);
      const [row] = await sql<{ n: string; total: string }>(
        t,
        `select count(*)::text as n, sum(amount)::text as total from nft_transaction where from_wallet_id = ?`,
        [sender.id],
      );
      expect(row).toEqual({ n: '37', total: '37' });
      const [negative] = await sql<{ n: string }>(t, 'select count(*)::text as n from balance where amount < 0');
      expect(negative.n).toBe('0');
    });

    it('opposite transfers between two wallets at once all succeed without deadlock', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '20');
      await api.mint(token.id, b.id, '20');
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          post(
            i % 2 === 0
              ? { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id }
              : { tokenId: token.id, fromWalletId: b.id, toWalletId: a.id },
          ),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));
      expect(await api.amountOf(a.id, token.id)).toBe('20');
      expect(await api.amountOf(b.id, token.id)).toBe('20');
    });
  });

  describe('Idempotency-Key', () => {
    it('the same key and body return the first answer and record nothing new', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      await api.mint(token.id, a.id, '5');
      const body = { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id, amount: '2' };
      const first = await post(body, { 'idempotency-key': 'transfer-001' }).expect(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const after = await snapshot([a.id, b.id]);
      const second = await post(body, { 'idempotency-key': 'transfer-001' }).expect(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(await snapshot([a.id, b.id])).toEqual(after);
      expect(await api.amountOf(a.id, token.id)).toBe('3');
      expect(await eventsFor(t, first.body.id)).toHaveLength(1);
    });

    it('treats an omitted amount and "1" as the same request', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const first = await post({ tokenId: token.id, toWalletId: wallet.id }, { 'idempotency-key': 'mint-default' }).expect(201);
      const again = await post({ tokenId: token.id, toWalletId: wallet.id, amount: '1' }, { 'idempotency-key': 'mint-default' }).expect(
        201,
      );
      expect(again.body).toEqual(first.body);
      expect(await api.amountOf(wallet.id, token.id)).toBe('1');
    });

    it('422 IDEMPOTENCY_KEY_REUSED for the same key with a different body, changing nothing', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      await post({ tokenId: token.id, toWalletId: wallet.id, amount: '1' }, { 'idempotency-key': 'reuse-me' }).expect(201);
      const before = await snapshot([wallet.id]);
      expectProblem(
        await post({ tokenId: token.id, toWalletId: wallet.id, amount: '2' }, { 'idempotency-key': 'reuse-me' }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
      expect(await snapshot([wallet.id])).toEqual(before);
    });

    it('keys belong to one organization: another organization may use the same key', async () => {
      const other = await createOrganization(t);
      const theirs = nftApi(t, other.adminKey);
      const [theirWallet, theirToken] = [await theirs.wallet(), await theirs.token()];
      const [wallet, token] = [await api.wallet(), await api.token()];
      const mine = await post({ tokenId: token.id, toWalletId: wallet.id }, { 'idempotency-key': 'shared-key' }).expect(201);
      const res = await t
        .http()
        .post('/v1/transactions')
        .set(bearer(other.adminKey))
        .set('idempotency-key', 'shared-key')
        .send({ tokenId: theirToken.id, toWalletId: theirWallet.id })
        .expect(201);
      expect(res.body.id).not.toBe(mine.body.id);
      expect(res.body.organizationId).toBe(other.id);
    });

    it('a refused request leaves the key free: the retry after fixing the cause is recorded', async () => {
      const [a, b] = [await api.wallet(), await api.wallet()];
      const token = await api.token();
      const body = { tokenId: token.id, fromWalletId: a.id, toWalletId: b.id };
      expectProblem(await post(body, { 'idempotency-key': 'after-refusal' }), 422, 'INSUFFICIENT_BALANCE');
      await api.mint(token.id, a.id, '1');
      const ok = await post(body, { 'idempotency-key': 'after-refusal' }).expect(201);
      expect((await post(body, { 'idempotency-key': 'after-refusal' }).expect(201)).body).toEqual(ok.body);
      expect(await api.amountOf(b.id, token.id)).toBe('1');
    });

    it('concurrent duplicates record exactly one transaction and all get its answer', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const body = { tokenId: token.id, toWalletId: wallet.id, amount: '3' };
      const results = await Promise.all(Array.from({ length: 12 }, () => post(body, { 'idempotency-key': 'burst-1' })));
      expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(11);
      expect(await api.amountOf(wallet.id, token.id)).toBe('3');
      const rows = await sql(t, 'select id from nft_transaction where token_id = ?', [token.id]);
      expect(rows).toHaveLength(1);
      expect(await eventsFor(t, results[0].body.id)).toHaveLength(1);
    });

    it('a key older than 24 hours records a new transaction', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const body = { tokenId: token.id, toWalletId: wallet.id };
      const first = await post(body, { 'idempotency-key': 'yesterday' }).expect(201);
      await sql(t, `update idempotency_key set created_at = now() - interval '25 hours' where organization_id = ? and key = ?`, [
        org.id,
        'yesterday',
      ]);
      const second = await post(body, { 'idempotency-key': 'yesterday' }).expect(201);
      expect(second.body.id).not.toBe(first.body.id);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(await api.amountOf(wallet.id, token.id)).toBe('2');
      // ...and the renewed key replays the new answer.
      expect((await post(body, { 'idempotency-key': 'yesterday' }).expect(201)).body).toEqual(second.body);
    });

    it('400 INVALID_IDEMPOTENCY_KEY for a key that is too long or has spaces', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const body = { tokenId: token.id, toWalletId: wallet.id };
      expectProblem(await post(body, { 'idempotency-key': 'x'.repeat(256) }), 400, 'INVALID_IDEMPOTENCY_KEY');
      expectProblem(await post(body, { 'idempotency-key': 'has space' }), 400, 'INVALID_IDEMPOTENCY_KEY');
      expect(await api.allBalances(wallet.id)).toEqual([]);
    });
  });
});
