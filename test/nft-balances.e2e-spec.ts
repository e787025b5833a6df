import { MikroORM } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { checksum, METADATA_KEYS, newAddress, nftApi, sql, UNKNOWN_ID } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

interface BalanceItem {
  tokenId: string;
  amount: string;
  token: { id: string; contractAddress: string; metadata: Record<string, unknown> };
}

/** Runs async work a few at a time: quick set-up without flooding the small test pool. */
async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return out;
}

const ascending = (ids: string[]) => [...ids].sort();

describe('GET /v2/wallets/{walletId}/nft-balances', () => {
  let t: TestApp;
  let org: TestOrganization;
  let api: ReturnType<typeof nftApi>;

  beforeAll(async () => {
    // A key cache longer than any test and no webhook worker, so that counting queries counts only
    // the page's own.
    t = await createTestApp({ API_KEY_CACHE_TTL_MS: '5000', ROLE: 'api' });
    org = await createOrganization(t);
    api = nftApi(t, org.adminKey);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A wallet holding one fresh token of each given contract (amounts 1, 2, 3...). */
  async function walletHolding(contracts: string[]) {
    const wallet = await api.wallet();
    const tokens = await inBatches(contracts, 8, async (contractAddress) =>
      api.token({ contractAddress, metadata: { name: contractAddress } }),
    );
    await inBatches(tokens, 8, async (token) => api.mint(token.id, wallet.id, String(tokens.indexOf(token) + 1)));
    return { wallet, tokens };
  }

  it('answers {nftTokenBalances, nextPageKey} in the documented shape, the token exactly as GET /v1/tokens shows it', async () => {
    const wallet = await api.wallet();
    const contract = newAddress();
    const token = await api.token({
      contractAddress: contract,
      blockchainTokenId: '42',
      metadata: { name: 'Genesis', image: 'https://example.com/1.png', editionId: 1, totalEdition: 10 },
    });
    await api.mint(token.id, wallet.id, '3');
    const res = await api.balancesPage(wallet.id).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['nextPageKey', 'nftTokenBalances']);
    expect(res.body.nextPageKey).toBeNull();
    expect(res.body.nftTokenBalances).toHaveLength(1);
    const [item] = res.body.nftTokenBalances;
    expect(Object.keys(item).sort()).toEqual(['amount', 'token', 'tokenId']);
    expect(item.tokenId).toBe(token.id);
    expect(item.amount).toBe('3');
    expect(Object.keys(item.token).sort()).toEqual([
      'blockchainTokenId',
      'chainId',
      'contractAddress',
      'id',
      'media',
      'metadata',
      'metadataError',
      'metadataStatus',
      'organizationId',
      'spam',
    ]);
    expect(item.token).toEqual({
      id: token.id,
      organizationId: org.id,
      contractAddress: checksum(contract),
      blockchainTokenId: '42',
      chainId: null,
      metadataStatus: 'ok',
      metadataError: null,
      metadata: {
        name: 'Genesis',
        description: null,
        image: 'https://example.com/1.png',
        animationUrl: null,
        externalUrl: null,
        backgroundColor: null,
        editionId: 1,
        totalEdition: 10,
        creatorName: null,
        creatorImageUrl: null,
        creatorExternalPageUrl: null,
      },
      // This process (ROLE=api) fetches no image: it stays pending (test/media.e2e-spec.ts).
      media: { status: 'pending', error: null, width: null, height: null, contentType: null, sha256: null, thumbnails: null },
      // Recorded through the API: no chain, so no spam classification.
      spam: null,
    });
    expect(Object.keys(item.token.metadata).sort()).toEqual([...METADATA_KEYS].sort());
    const detail = await t.http().get(`/v1/tokens/${token.id}`).set(api.auth).expect(200);
    expect(item.token).toEqual(detail.body);
  });

  it('an empty wallet answers an empty list and no next page', async () => {
    const wallet = await api.wallet();
    expect((await api.balancesPage(wallet.id).expect(200)).body).toEqual({ nftTokenBalances: [], nextPageKey: null });
  });

  it('lists only amounts above zero, ordered by tokenId ascending', async () => {
    const { wallet, tokens } = await walletHolding([newAddress(), newAddress(), newAddress(), newAddress()]);
    const other = await api.wallet();
    await api.move({ tokenId: tokens[1].id, fromWalletId: wallet.id, toWalletId: other.id, amount: '2' });
    await api.move({ tokenId: tokens[3].id, fromWalletId: wallet.id, amount: '4' });
    const items: BalanceItem[] = (await api.balancesPage(wallet.id).expect(200)).body.nftTokenBalances;
    const ids = items.map((i) => i.tokenId);
    expect(ids).toEqual(ascending([tokens[0].id, tokens[2].id]));
    expect(items.map((i) => i.amount)).toEqual(ids.map((id) => (id === tokens[0].id ? '1' : '3')));
    const [zero] = await sql<{ amount: string }>(t, 'select amount::text as amount from balance where wallet_id = ? and token_id = ?', [
      wallet.id,
      tokens[1].id,
    ]);
    expect(zero.amount).toBe('0');
  });

  it('pages with pageSize and pageKey, default 100, without skips or repeats', async () => {
    const { wallet, tokens } = await walletHolding(Array.from({ length: 7 }, () => newAddress()));
    const seen: string[] = [];
    const sizes: number[] = [];
    let pageKey: string | null = null;
    do {
      const res: { body: { nftTokenBalances: BalanceItem[]; nextPageKey: string | null } } = await api
        .balancesPage(wallet.id, pageKey ? { pageSize: 3, pageKey } : { pageSize: 3 })
        .expect(200);
      sizes.push(res.body.nftTokenBalances.length);
      seen.push(...res.body.nftTokenBalances.map((i) => i.tokenId));
      pageKey = res.body.nextPageKey;
    } while (pageKey);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(ascending(tokens.map((x) => x.id)));
    // Exactly a full last page has no next page.
    const exact = await api.balancesPage(wallet.id, { pageSize: 7 }).expect(200);
    expect(exact.body.nextPageKey).toBeNull();
    expect((await api.balancesPage(wallet.id).expect(200)).body.nftTokenBalances).toHaveLength(7);
  });

  it('never skips or repeats a token held throughout, while balances move in and out between pages', async () => {
    const { wallet, tokens } = await walletHolding(Array.from({ length: 10 }, () => newAddress()));
    const ordered = [...tokens].sort((a, b) => (a.id < b.id ? -1 : 1)).map((x) => x.id);
    const elsewhere = await api.wallet();
    const seen: string[] = [];
    const removed = new Set<string>();
    const added: string[] = [];

    const page = async (pageKey: string | null) => {
      const res = await api.balancesPage(wallet.id, pageKey ? { pageSize: 3, pageKey } : { pageSize: 3 }).expect(200);
      seen.push(...res.body.nftTokenBalances.map((i: BalanceItem) => i.tokenId));
      return res.body as { nftTokenBalances: BalanceItem[]; nextPageKey: string | null };
    };

    let current = await page(null);
    expect(current.nftTokenBalances.map((i) => i.tokenId)).toEqual(ordered.slice(0, 3));
    // Out: one already served and one not yet reached. In: a new token (sorts after everything).
    await api.move({ tokenId: ordered[1], fromWalletId: wallet.id, toWalletId: elsewhere.id, amount: '1' });
    await api.move({
      tokenId: ordered[4],
      fromWalletId: wallet.id,
      toWalletId: elsewhere.id,
      amount: tokens.findIndex((x) => x.id === ordered[4]) + 1 + '',
    });
    removed.add(ordered[1]).add(ordered[4]);
    const fresh = await api.token();
    await api.mint(fresh.id, wallet.id);
    added.push(fresh.id);

    current = await page(current.nextPageKey);
    const lastServed = current.nftTokenBalances[current.nftTokenBalances.length - 1].tokenId;
    // The very item the page key points at leaves the wallet, and one already served comes back.
    const amountOfLast = tokens.findIndex((x) => x.id === lastServed) + 1;
    await api.move({ tokenId: lastServed, fromWalletId: wallet.id, amount: String(amountOfLast) });
    await api.move({ tokenId: ordered[1], fromWalletId: elsewhere.id, toWalletId: wallet.id, amount: '1' });
    // Partial moves keep the token in the wallet.
    const partial = ordered[8];
    const partialAmount = tokens.findIndex((x) => x.id === partial) + 1;
    await api.move({ tokenId: partial, fromWalletId: wallet.id, toWalletId: elsewhere.id, amount: String(partialAmount - 1) });

    while (current.nextPageKey) current = await page(current.nextPageKey);

    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(ascending(seen));
    const heldThroughout = ordered.filter((id) => !removed.has(id) && id !== lastServed);
    for (const id of [...heldThroughout, ...added]) expect(seen).toContain(id);
    expect(seen).not.toContain(ordered[4]);
    expect(seen).toContain(partial);
  });

  it('filters by contractAddress, repeatable and in any accepted case', async () => {
    const [a, b, c] = [newAddress(), newAddress(), newAddress()];
    const { wallet, tokens } = await walletHolding([a, b, c, a]);
    const ids = (res: { body: { nftTokenBalances: BalanceItem[] } }) => res.body.nftTokenBalances.map((i) => i.tokenId);

    const onlyA = await api.balancesPage(wallet.id, { contractAddress: checksum(a) }).expect(200);
    expect(ids(onlyA)).toEqual(ascending([tokens[0].id, tokens[3].id]));
    expect(onlyA.body.nftTokenBalances.every((i: BalanceItem) => i.token.contractAddress === checksum(a))).toBe(true);

    const aAndB = await t
      .http()
      .get(`/v2/wallets/${wallet.id}/nft-balances?contractAddress=${a}&contractAddress=0x${b.slice(2).toUpperCase()}`)
      .set(api.auth)
      .expect(200);
    expect(ids(aAndB)).toEqual(ascending([tokens[0].id, tokens[1].id, tokens[3].id]));

    const paged = await api.balancesPage(wallet.id, { contractAddress: a, pageSize: 1 }).expect(200);
    expect(ids(paged)).toEqual([ascending([tokens[0].id, tokens[3].id])[0]]);
    const next = await api.balancesPage(wallet.id, { contractAddress: a, pageSize: 1, pageKey: paged.body.nextPageKey }).expect(200);
    expect(ids(next)).toEqual([ascending([tokens[0].id, tokens[3].id])[1]]);
    expect(next.body.nextPageKey).toBeNull();

    expect(ids(await api.balancesPage(wallet.id, { contractAddress: newAddress() }).expect(200))).toEqual([]);

    const wrongChecksum = checksum(c).replace(/[a-f]/, (ch) => ch.toUpperCase());
    if (wrongChecksum !== checksum(c)) {
      expectProblem(await api.balancesPage(wallet.id, { contractAddress: wrongChecksum }), 400, 'INVALID_ADDRESS');
    }
    const malformed = await api.balancesPage(wallet.id, { contractAddress: '0x123' });
    expectProblem(malformed, 400, 'VALIDATION_FAILED');
    expect(malformed.body.errors.map((e: { field: string }) => e.field)).toContain('contractAddress');
  });

  it('with the whitelist on, hides other contracts inside the query: pages stay full', async () => {
    const own = await createOrganization(t);
    const ownApi = nftApi(t, own.adminKey);
    const [allowed, hidden] = [newAddress(), newAddress()];
    const wallet = await ownApi.wallet();
    const tokens = [];
    for (let i = 0; i < 8; i += 1) tokens.push(await ownApi.token({ contractAddress: i % 2 === 0 ? allowed : hidden }));
    for (const token of tokens) await ownApi.mint(token.id, wallet.id);
    await sql(t, 'insert into nft_whitelist (organization_id, enabled, updated_at) values (?, true, now())', [own.id]);
    await sql(t, 'insert into nft_whitelist_contract (organization_id, contract_address, created_at) values (?, ?, now())', [
      own.id,
      allowed,
    ]);

    const visible = ascending(tokens.filter((_, i) => i % 2 === 0).map((x) => x.id));
    const first = await ownApi.balancesPage(wallet.id, { pageSize: 2 }).expect(200);
    expect(first.body.nftTokenBalances.map((i: BalanceItem) => i.tokenId)).toEqual(visible.slice(0, 2));
    const second = await ownApi.balancesPage(wallet.id, { pageSize: 2, pageKey: first.body.nextPageKey }).expect(200);
    expect(second.body.nftTokenBalances.map((i: BalanceItem) => i.tokenId)).toEqual(visible.slice(2, 4));
    // Hidden tokens remain after the last visible one, yet there is no next page to fetch.
    expect(second.body.nextPageKey).toBeNull();
    expect((await ownApi.balancesPage(wallet.id, { contractAddress: hidden }).expect(200)).body.nftTokenBalances).toEqual([]);

    await sql(t, 'update nft_whitelist set enabled = false where organization_id = ?', [own.id]);
    expect((await ownApi.balancesPage(wallet.id).expect(200)).body.nftTokenBalances).toHaveLength(8);
  });

  it('400 for bad paging parameters and a walletId that is not a UUID', async () => {
    const wallet = await api.wallet();
    for (const pageSize of ['0', '1001', 'abc', '1.5']) {
      expectProblem(await api.balancesPage(wallet.id, { pageSize }), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await api.balancesPage(wallet.id, { pageKey: 'not a key' }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await api.balancesPage(wallet.id, { pageKey: Buffer.from('["x"]').toString('base64url') }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await api.balancesPage(wallet.id, { unknown: 1 }), 400, 'VALIDATION_FAILED');
    expectProblem(await api.balancesPage('wallet-1'), 400, 'INVALID_PATH_PARAMETER');
  });

  it("404 WALLET_NOT_FOUND for an unknown wallet and for another organization's, exactly alike", async () => {
    const other = await createOrganization(t);
    const theirs = nftApi(t, other.adminKey);
    const theirWallet = await theirs.wallet();
    const theirToken = await theirs.token();
    await theirs.mint(theirToken.id, theirWallet.id);
    const unknown = await api.balancesPage(UNKNOWN_ID);
    const foreign = await api.balancesPage(theirWallet.id);
    expectProblem(unknown, 404, 'WALLET_NOT_FOUND');
    expectProblem(foreign, 404, 'WALLET_NOT_FOUND');
    expect(foreign.body.title).toBe(unknown.body.title);
    expect(JSON.stringify(foreign.body)).not.toContain(theirToken.id);
    // Their own key still sees it.
    expect((await theirs.balancesPage(theirWallet.id).expect(200)).body.nftTokenBalances).toHaveLength(1);
  });

  it('roles: read and admin may list; write alone may not; no key is a 401', async () => {
    const wallet = await api.wallet();
    const reader = (await createApiKey(t, org.id, ['read'])).key;
    const writer = (await createApiKey(t, org.id, ['write'])).key;
    await t.http().get(`/v2/wallets/${wallet.id}/nft-balances`).set(bearer(reader)).expect(200);
    expectProblem(await t.http().get(`/v2/wallets/${wallet.id}/nft-balances`).set(bearer(writer)), 403, 'FORBIDDEN');
    expectProblem(await t.http().get(`/v2/wallets/${wallet.id}/nft-balances`), 401, 'UNAUTHENTICATED');
  });

  it('is documented in the OpenAPI document, with the token metadata keys nullable', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body;
    const ref = (schema: { $ref?: string }) => schema.$ref?.split('/').pop();
    const balances = doc.paths['/v2/wallets/{walletId}/nft-balances'].get;
    expect(balances.security).toEqual([{ apiKey: [] }]);
    expect(balances.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['walletId', 'contractAddress']));
    expect(ref(balances.responses['200'].content['application/json'].schema)).toBe('NftBalancesPageDto');
    for (const [path, method] of [
      ['/v1/tokens/{tokenId}', 'get'],
      ['/v1/tokens/{tokenId}', 'patch'],
      ['/v1/tokens', 'post'],
      ['/v1/wallets', 'post'],
      ['/v1/wallets', 'get'],
      ['/v1/wallets/{walletId}', 'get'],
      ['/v1/transactions', 'post'],
      ['/v1/transactions/{transactionId}', 'get'],
    ]) {
      expect(doc.paths[path]?.[method]?.summary).toEqual(expect.any(String));
    }
    const schemas = doc.components.schemas;
    expect(ref(schemas.TokenDto.properties.metadata)).toBe('TokenMetadataDto');
    expect(Object.keys(schemas.TokenMetadataDto.properties).sort()).toEqual([...METADATA_KEYS].sort());
    // OpenAPI 3.1 spells nullable as a type array that includes "null".
    for (const key of METADATA_KEYS) expect([schemas.TokenMetadataDto.properties[key].type].flat()).toContain('null');
    expect(Object.keys(schemas.NftTokenBalanceDto.properties).sort()).toEqual(['amount', 'token', 'tokenId']);
    expect(Object.keys(schemas.TransactionDto.properties).sort()).toEqual(
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
    expect(Object.keys(schemas.WalletDto.properties).sort()).toEqual(['address', 'createdAtUtc', 'id', 'name', 'organizationId']);
  });

  describe('one SQL query per page', () => {
    /**
     * Every SQL statement the app sends while `work` runs, except the webhook pipeline's own
     * polling and the API key lookup: the key cache expires after API_KEY_CACHE_TTL_MS, so on a
     * slow machine a lookup can fall inside any request, and it is not the route's work.
     */
    async function queriesDuring(work: () => Promise<unknown>): Promise<string[]> {
      const knex = (t.app.get(MikroORM).em as EntityManager).getKnex();
      const seen: string[] = [];
      const listener = (query: { sql: string }) => {
        if (!/domain_event|webhook|from "api_key"/i.test(query.sql)) seen.push(query.sql);
      };
      knex.on('query', listener);
      try {
        await work();
      } finally {
        knex.removeListener('query', listener);
      }
      return seen;
    }

    it('counts the statements of a request (the counter sees real queries)', async () => {
      const wallet = await api.wallet();
      const token = await api.token();
      const queries = await queriesDuring(() => api.mint(token.id, wallet.id));
      expect(queries.length).toBeGreaterThanOrEqual(4);
      expect(queries.some((q) => /update "balance"|insert into "balance"/.test(q))).toBe(true);
    });

    it('whatever the page size, with the wallet check, the whitelist and the contract filter folded in', async () => {
      const contracts = Array.from({ length: 4 }, () => newAddress());
      const wallet = await api.wallet();
      const tokens = await inBatches(
        Array.from({ length: 120 }, (_, i) => contracts[i % 4]),
        10,
        (contractAddress) => api.token({ contractAddress }),
      );
      await inBatches(tokens, 10, (token) => api.mint(token.id, wallet.id));
      await api.balancesPage(wallet.id, { pageSize: 1 }).expect(200); // the key is now cached

      for (const pageSize of [1, 10, 100, 1000]) {
        let body: { nftTokenBalances: unknown[]; nextPageKey: string | null } = { nftTokenBalances: [], nextPageKey: null };
        const queries = await queriesDuring(async () => {
          body = (await api.balancesPage(wallet.id, { pageSize }).expect(200)).body;
        });
        expect(body.nftTokenBalances).toHaveLength(Math.min(pageSize, 120));
        expect(queries).toHaveLength(1);
        expect(queries[0]).toMatch(/from "wallet"/);
        expect(queries[0]).toMatch(/"balance"/);
        expect(queries[0]).toMatch(/"nft_whitelist"/);
      }

      const second = await api.balancesPage(wallet.id, { pageSize: 50 }).expect(200);
      const filtered = await queriesDuring(() =>
        api
          .balancesPage(wallet.id, { pageSize: 50, pageKey: second.body.nextPageKey, contractAddress: [contracts[0], contracts[1]] })
          .expect(200),
      );
      expect(filtered).toHaveLength(1);

      const missing = await queriesDuring(async () => expectProblem(await api.balancesPage(UNKNOWN_ID), 404, 'WALLET_NOT_FOUND'));
      expect(missing).toHaveLength(1);
    });
  });
});
