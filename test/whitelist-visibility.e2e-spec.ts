import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const WHITELIST = '/api/organization/v1/current-organization/nft-whitelist';

const newAddress = () => `0x${randomBytes(20).toString('hex')}`;
const upperHex = (address: string) => `0x${address.slice(2).toUpperCase()}`;

interface Balance {
  tokenId: string;
  amount: string;
  token: { id: string; contractAddress: string; blockchainTokenId: string };
}

let tokenCounter = 0;

/** Runs async work a few at a time: fast set-up without flooding the small test pool. */
async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return out;
}

function client(t: TestApp, org: TestOrganization) {
  const auth = bearer(org.adminKey);
  return {
    async wallet(): Promise<string> {
      return (await t.http().post('/v1/wallets').set(auth).send({ name: 'holder' }).expect(201)).body.id;
    },
    async token(contractAddress: string): Promise<string> {
      tokenCounter += 1;
      const res = await t
        .http()
        .post('/v1/tokens')
        .set(auth)
        .send({ contractAddress, blockchainTokenId: String(tokenCounter), metadata: { name: `NFT ${tokenCounter}` } })
        .expect(201);
      return res.body.id;
    },
    async mint(tokenId: string, toWalletId: string): Promise<void> {
      await t.http().post('/v1/transactions').set(auth).send({ tokenId, toWalletId }).expect(201);
    },
    /** A token of the contract, minted into the wallet. */
    async held(walletId: string, contractAddress: string): Promise<string> {
      const tokenId = await this.token(contractAddress);
      await this.mint(tokenId, walletId);
      return tokenId;
    },
    balancesPage(walletId: string, query: Record<string, unknown> = {}, app: TestApp = t) {
      return app.http().get(`/v2/wallets/${walletId}/nft-balances`).query(query).set(auth);
    },
    /** Every visible balance, read page by page. */
    async balances(walletId: string, app: TestApp = t, pageSize = 1000): Promise<Balance[]> {
      const all: Balance[] = [];
      let pageKey: string | null = null;
      do {
        const res: { body: { nftTokenBalances: Balance[]; nextPageKey: string | null } } = await this.balancesPage(
          walletId,
          pageKey ? { pageSize, pageKey } : { pageSize },
          app,
        ).expect(200);
        all.push(...res.body.nftTokenBalances);
        pageKey = res.body.nextPageKey;
      } while (pageKey);
      return all;
    },
    async visibleTokenIds(walletId: string, app: TestApp = t): Promise<string[]> {
      return (await this.balances(walletId, app)).map((b) => b.tokenId);
    },
    tokenDetail(tokenId: string, app: TestApp = t) {
      return app.http().get(`/v1/tokens/${tokenId}`).set(auth);
    },
    async setEnabled(enabled: boolean, app: TestApp = t): Promise<void> {
      await app.http().patch(WHITELIST).set(auth).send({ enabled }).expect(200);
    },
    async allow(contractAddresses: string[], app: TestApp = t): Promise<void> {
      await app.http().post(`${WHITELIST}/contracts`).set(auth).send({ contractAddresses }).expect(200);
    },
    async disallow(contractAddress: string, app: TestApp = t): Promise<void> {
      await app.http().delete(`${WHITELIST}/contracts/${contractAddress}`).set(auth).expect(204);
    },
  };
}

const sorted = (ids: string[]) => [...ids].sort();

describe('the whitelist applied to wallet and token reads', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('hides tokens of other contracts while on, and shows everything again when switched off', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const wallet = await api.wallet();
    const [allowed, other] = [newAddress(), newAddress()];
    const allowedTokens = [await api.held(wallet, allowed), await api.held(wallet, allowed)];
    const otherTokens = [await api.held(wallet, other), await api.held(wallet, other)];

    await api.allow([allowed]);
    expect(await api.visibleTokenIds(wallet)).toEqual(sorted([...allowedTokens, ...otherTokens]));

    await api.setEnabled(true);
    const visible = await api.balances(wallet);
    expect(visible.map((b) => b.tokenId)).toEqual(sorted(allowedTokens));
    expect(visible.every((b) => b.token.contractAddress === getAddress(allowed))).toBe(true);

    await api.setEnabled(false);
    expect(await api.visibleTokenIds(wallet)).toEqual(sorted([...allowedTokens, ...otherTokens]));
  });

  it('answers 404 TOKEN_NOT_FOUND for the detail of a hidden token, and the token again when it is visible', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const [allowed, other] = [newAddress(), newAddress()];
    const allowedToken = await api.token(allowed);
    const otherToken = await api.token(other);
    await api.allow([allowed]);
    await api.setEnabled(true);

    const shown = await api.tokenDetail(allowedToken).expect(200);
    expect(shown.body).toEqual(expect.objectContaining({ id: allowedToken, contractAddress: getAddress(allowed) }));
    const hidden = await api.tokenDetail(otherToken);
    expectProblem(hidden, 404, 'TOKEN_NOT_FOUND');
    expect(JSON.stringify(hidden.body)).not.toContain(other.slice(2, 12));

    await api.allow([other]);
    await api.tokenDetail(otherToken).expect(200);
    await api.disallow(other);
    expectProblem(await api.tokenDetail(otherToken), 404, 'TOKEN_NOT_FOUND');
    await api.setEnabled(false);
    await api.tokenDetail(otherToken).expect(200);
  });

  it('shows nothing while on with an empty whitelist, yet the wallet itself is still found', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const wallet = await api.wallet();
    await api.held(wallet, newAddress());
    await api.setEnabled(true);
    const res = await api.balancesPage(wallet).expect(200);
    expect(res.body).toEqual({ nftTokenBalances: [], nextPageKey: null });
  });

  it('matches addresses whatever their case on either side', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const wallet = await api.wallet();
    const [a, b, c, hidden] = [newAddress(), newAddress(), newAddress(), newAddress()];
    // Tokens recorded with one spelling of the address, the whitelist given another.
    const tokenA = await api.held(wallet, getAddress(a));
    const tokenB = await api.held(wallet, upperHex(b));
    const tokenC = await api.held(wallet, c);
    await api.held(wallet, hidden);
    await api.allow([upperHex(a), b, getAddress(c)]);
    await api.setEnabled(true);

    expect(await api.visibleTokenIds(wallet)).toEqual(sorted([tokenA, tokenB, tokenC]));
    for (const id of [tokenA, tokenB, tokenC]) await api.tokenDetail(id).expect(200);
  });

  it('applies a deleted contract on the very next request', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const wallet = await api.wallet();
    const [a, b] = [newAddress(), newAddress()];
    const tokenA = await api.held(wallet, a);
    const tokenB = await api.held(wallet, b);
    await api.allow([a, b]);
    await api.setEnabled(true);
    expect(await api.visibleTokenIds(wallet)).toEqual(sorted([tokenA, tokenB]));
    await api.disallow(getAddress(b));
    expect(await api.visibleTokenIds(wallet)).toEqual([tokenA]);
    await api.allow([upperHex(b)]);
    expect(await api.visibleTokenIds(wallet)).toEqual(sorted([tokenA, tokenB]));
  });

  it('combines with the contractAddress filter of the balances page', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const wallet = await api.wallet();
    const [a, b] = [newAddress(), newAddress()];
    const tokenA = await api.held(wallet, a);
    await api.held(wallet, b);
    await api.allow([a]);
    await api.setEnabled(true);
    const onlyB = await api.balancesPage(wallet, { contractAddress: getAddress(b) }).expect(200);
    expect(onlyB.body.nftTokenBalances).toEqual([]);
    const onlyA = await api.balancesPage(wallet, { contractAddress: upperHex(a) }).expect(200);
    expect(onlyA.body.nftTokenBalances.map((x: Balance) => x.tokenId)).toEqual([tokenA]);
  });

  it("never applies another organization's whitelist", async () => {
    const [orgA, orgB] = [await createOrganization(t), await createOrganization(t)];
    const [apiA, apiB] = [client(t, orgA), client(t, orgB)];
    const [x, y] = [newAddress(), newAddress()];
    const walletA = await apiA.wallet();
    const walletB = await apiB.wallet();
    const tokensA = [await apiA.held(walletA, x), await apiA.held(walletA, y)];
    const tokenBx = await apiB.held(walletB, x);
    const tokenBy = await apiB.held(walletB, y);

    // B restricts itself to x: A, switched off, still sees everything.
    await apiB.allow([x]);
    await apiB.setEnabled(true);
    expect(await apiA.visibleTokenIds(walletA)).toEqual(sorted(tokensA));
    for (const id of tokensA) await apiA.tokenDetail(id).expect(200);
    expect(await apiB.visibleTokenIds(walletB)).toEqual([tokenBx]);

    // A switches on with only y: B's list of x does not make A's x tokens visible.
    await apiA.allow([y]);
    await apiA.setEnabled(true);
    expect(await apiA.visibleTokenIds(walletA)).toEqual([tokensA[1]]);
    expectProblem(await apiA.tokenDetail(tokensA[0]), 404, 'TOKEN_NOT_FOUND');
    expect(await apiB.visibleTokenIds(walletB)).toEqual([tokenBx]);
    expectProblem(await apiB.tokenDetail(tokenBy), 404, 'TOKEN_NOT_FOUND');
  });

  it('pages a filtered wallet full: 300 NFTs of 30 contracts, 10 whitelisted, pageSize 7', async () => {
    const org = await createOrganization(t);
    const api = client(t, org);
    const wallet = await api.wallet();
    const contracts = Array.from({ length: 30 }, newAddress);
    const whitelisted = new Set(contracts.filter((_, i) => i % 3 === 0));
    // Interleave contracts so visible and hidden tokens alternate in tokenId order.
    const plan = Array.from({ length: 300 }, (_, i) => contracts[i % 30]);
    const tokens = await inBatches(plan, 10, async (contract) => ({ contract, id: await api.token(contract) }));
    await inBatches(tokens, 10, (token) => api.mint(token.id, wallet));
    await api.allow([...whitelisted].map((c) => getAddress(c)));
    await api.setEnabled(true);

    const expected = sorted(tokens.filter((token) => whitelisted.has(token.contract)).map((token) => token.id));
    expect(expected).toHaveLength(100);

    const pages: Balance[][] = [];
    let pageKey: string | null = null;
    do {
      const res: { body: { nftTokenBalances: Balance[]; nextPageKey: string | null } } = await api
        .balancesPage(wallet, pageKey ? { pageSize: 7, pageKey } : { pageSize: 7 })
        .expect(200);
      pages.push(res.body.nftTokenBalances);
      pageKey = res.body.nextPageKey;
    } while (pageKey && pages.length < 100);

    expect(pages.map((page) => page.length)).toEqual([...Array(14).fill(7), 2]);
    const seen = pages.flat();
    expect(seen.map((b) => b.tokenId)).toEqual(expected);
    expect(seen.every((b) => whitelisted.has(b.token.contractAddress.toLowerCase()))).toBe(true);
    expect(seen.every((b) => b.amount === '1' && b.token.id === b.tokenId)).toBe(true);

    await api.setEnabled(false);
    expect(await api.balances(wallet, t, 1000)).toHaveLength(300);
  }, 120_000);

  describe('with two instances of the service', () => {
    let second: TestApp;

    beforeAll(async () => {
      second = await createTestApp();
    });
    afterAll(async () => {
      await second.close();
    });

    it('sees a change made through the other instance on the very next request', async () => {
      const org = await createOrganization(t);
      const api = client(t, org);
      const wallet = await api.wallet();
      const [a, b] = [newAddress(), newAddress()];
      const tokenA = await api.held(wallet, a);
      const tokenB = await api.held(wallet, b);

      // Both instances have served the wallet and the token before the change.
      expect(await api.visibleTokenIds(wallet, second)).toEqual(sorted([tokenA, tokenB]));
      await api.tokenDetail(tokenB, second).expect(200);

      await api.allow([a], t);
      await api.setEnabled(true, t);
      expect(await api.visibleTokenIds(wallet, second)).toEqual([tokenA]);
      expectProblem(await api.tokenDetail(tokenB, second), 404, 'TOKEN_NOT_FOUND');

      await api.allow([b], second);
      expect(await api.visibleTokenIds(wallet, t)).toEqual(sorted([tokenA, tokenB]));
      await api.disallow(a, second);
      expect(await api.visibleTokenIds(wallet, t)).toEqual([tokenB]);
      expectProblem(await api.tokenDetail(tokenA, t), 404, 'TOKEN_NOT_FOUND');

      await api.setEnabled(false, second);
      expect(await api.visibleTokenIds(wallet, t)).toEqual(sorted([tokenA, tokenB]));
      await api.tokenDetail(tokenA, t).expect(200);
    }, 30_000);
  });
});
