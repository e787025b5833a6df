import type { AddressInfo } from 'node:net';
import { createNftWalletClient, type NftWalletClient } from '../clients/typescript/src';
import { createOrganization } from './support/factories';
import { nftApi, UNKNOWN_ID } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The typed client of clients/typescript against the running service, over real HTTP: the read
 * path an integrator starts with (wallets, NFT balances, tokens), answers and errors as typed.
 */
describe('typed TypeScript client', () => {
  let t: TestApp;
  let client: NftWalletClient;
  let ids: { walletId: string; tokenId: string; contractAddress: string };

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    const org = await createOrganization(t);
    const api = nftApi(t, org.adminKey);
    const wallet = await api.wallet({ name: 'client wallet' });
    const token = await api.token({ metadata: { name: 'Client token' } });
    await api.mint(token.id, wallet.id, '3');
    ids = { walletId: wallet.id, tokenId: token.id, contractAddress: token.contractAddress };
    client = createNftWalletClient({
      baseUrl: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}/`,
      apiKey: org.adminKey,
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists and reads wallets', async () => {
    const list = await client.GET('/v1/wallets', { params: { query: { pageSize: 10 } } });
    expect(list.response.status).toBe(200);
    expect(list.data?.wallets.map((w) => w.id)).toEqual([ids.walletId]);
    expect(list.data?.nextPageKey).toBeNull();

    const one = await client.GET('/v1/wallets/{walletId}', { params: { path: { walletId: ids.walletId } } });
    expect(one.data).toEqual(expect.objectContaining({ id: ids.walletId, name: 'client wallet', address: null }));
  });

  it('reads NFT balances and tokens', async () => {
    const balances = await client.GET('/v2/wallets/{walletId}/nft-balances', { params: { path: { walletId: ids.walletId } } });
    expect(balances.response.status).toBe(200);
    expect(balances.data?.nftTokenBalances.map((b) => [b.tokenId, b.amount])).toEqual([[ids.tokenId, '3']]);

    const token = await client.GET('/v1/tokens/{tokenId}', { params: { path: { tokenId: ids.tokenId } } });
    expect(token.data?.id).toBe(ids.tokenId);
    expect(token.data?.contractAddress.toLowerCase()).toBe(ids.contractAddress.toLowerCase());
  });

  it('gives documented errors as problem details', async () => {
    const missing = await client.GET('/v1/wallets/{walletId}', { params: { path: { walletId: UNKNOWN_ID } } });
    expect(missing.response.status).toBe(404);
    expect(missing.data).toBeUndefined();
    expect(missing.error).toEqual(expect.objectContaining({ status: 404, code: 'WALLET_NOT_FOUND' }));

    const badPage = await client.GET('/v1/wallets', { params: { query: { pageKey: 'not-a-page-key' } } });
    expect(badPage.error?.code).toBe('INVALID_PAGE_KEY');
  });
});
