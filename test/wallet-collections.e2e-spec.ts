import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ERC1155_ABI, ERC721_ABI, LocalChain } from './support/evm';
import { startFollowing, waitApplied, walletAt } from './support/chain-fixture';
import { checksum, newAddress, nftApi, sql, UNKNOWN_ID } from './support/nft';
import { waitUntil } from './support/receiver';
import { TestApp } from './support/test-app';

interface Collection {
  chainId: number | null;
  contractAddress: string;
  name: string | null;
  symbol: string | null;
  standard: string | null;
  tokenCount: number;
  totalAmount: string;
  spam: unknown;
}

describe('GET /v1/wallets/{walletId}/collections', () => {
  let chain: LocalChain;
  let t: TestApp;
  let org: TestOrganization;
  let api: ReturnType<typeof nftApi>;
  let alice: `0x${string}`, bob: `0x${string}`;
  let aliceWallet: string;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31602 });
    [, alice, bob] = chain.accounts;
    t = await startFollowing(chain);
    org = await createOrganization(t);
    api = nftApi(t, org.adminKey);
    aliceWallet = await walletAt(t, org, alice, 'alice');
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  const collections = (walletId: string, query: Record<string, unknown> = {}, key = org.adminKey) =>
    t.http().get(`/v1/wallets/${walletId}/collections`).query(query).set(bearer(key));
  const profiled = (contract: string) =>
    waitUntil(
      () =>
        sql(t, `select 1 from "chain_contract" where "chain_id" = ? and "contract_address" = ?`, [chain.chainId, contract.toLowerCase()]),
      (rows) => rows.length === 1,
      30_000,
    );

  it('groups chain holdings by contract with name, symbol, standard, counts and spam, exactly as nft-balances lists them', async () => {
    const nft = await chain.deployErc721({ name: 'Kittens', symbol: 'KIT' });
    const multi = await chain.deployErc1155();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 1n]);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 2n]);
    await chain.write(nft, ERC721_ABI, 'mint', [bob, 3n]);
    await chain.write(multi, ERC1155_ABI, 'mintBatch', [alice, [7n, 8n], [3n, 4n]]);
    await waitApplied(t, chain);
    await profiled(nft);
    await profiled(multi);
    const res = await waitUntil(
      () => collections(aliceWallet).expect(200),
      (r) => r.body.collections.length === 2,
    );
    expect(Object.keys(res.body).sort()).toEqual(['collections', 'nextPageKey']);
    const expected: Collection[] = [
      {
        chainId: chain.chainId,
        contractAddress: checksum(nft),
        name: 'Kittens',
        symbol: 'KIT',
        standard: 'erc721',
        tokenCount: 2,
        totalAmount: '2',
        spam: { isSpam: false, reasons: [], source: 'rules' },
      },
      {
        chainId: chain.chainId,
        contractAddress: checksum(multi),
        // An ERC-1155 without name() or symbol(): the calls revert.
        name: null,
        symbol: null,
        standard: 'erc1155',
        tokenCount: 2,
        totalAmount: '7',
        spam: { isSpam: false, reasons: [], source: 'rules' },
      },
    ].sort((a, b) => (a.contractAddress.toLowerCase() < b.contractAddress.toLowerCase() ? -1 : 1));
    expect(res.body.collections).toEqual(expected);
    expect(res.body.nextPageKey).toBeNull();

    // The same holdings as nft-balances.
    const balances = await api.allBalances(aliceWallet);
    expect(balances).toHaveLength(4);

    // Paging: one collection per page, in the same order, nothing skipped or repeated.
    const first = await collections(aliceWallet, { pageSize: 1 }).expect(200);
    expect(first.body.collections).toEqual([expected[0]]);
    const second = await collections(aliceWallet, { pageSize: 1, pageKey: first.body.nextPageKey }).expect(200);
    expect(second.body.collections).toEqual([expected[1]]);
    expect(second.body.nextPageKey).toBeNull();
  });

  it('answers the holdings at asOf, as nft-balances with the same asOf', async () => {
    const nft = await chain.deployErc721({ name: 'Later', symbol: 'LTR' });
    await chain.mine(1);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 1n]);
    await waitApplied(t, chain);
    await waitUntil(
      () => collections(aliceWallet).expect(200),
      (r) => r.body.collections.some((c: Collection) => c.contractAddress === checksum(nft)),
    );
    const block = await chain.publicClient.getBlock();
    const asOfBefore = new Date(Number(block.timestamp) * 1000 - 1000).toISOString().replace('Z', '+00:00');
    const then = await collections(aliceWallet, { asOf: asOfBefore }).expect(200);
    const balancesThen = await api.balancesPage(aliceWallet, { asOf: asOfBefore }).expect(200);
    const contractsThen = new Set(
      balancesThen.body.nftTokenBalances.map((b: { token: { contractAddress: string } }) => b.token.contractAddress),
    );
    expect(new Set(then.body.collections.map((c: Collection) => c.contractAddress))).toEqual(contractsThen);
    expect(then.body.collections.map((c: Collection) => c.contractAddress)).not.toContain(checksum(nft));
    const now = await collections(aliceWallet, { asOf: new Date(Number(block.timestamp) * 1000).toISOString() }).expect(200);
    expect(now.body.collections.map((c: Collection) => c.contractAddress)).toContain(checksum(nft));
  });

  it('shows API-recorded tokens as collections with chainId, name, symbol, standard and spam null, first among equals', async () => {
    const wallet = await api.wallet();
    const contract = newAddress();
    const [a, b] = [await api.token({ contractAddress: contract }), await api.token({ contractAddress: contract })];
    await api.mint(a.id, wallet.id, '2');
    await api.mint(b.id, wallet.id, '5');
    const other = await api.token();
    await api.mint(other.id, wallet.id);
    await api.move({ tokenId: other.id, fromWalletId: wallet.id }); // burnt: not held
    const res = await collections(wallet.id).expect(200);
    expect(res.body.collections).toEqual([
      {
        chainId: null,
        contractAddress: checksum(contract),
        name: null,
        symbol: null,
        standard: null,
        tokenCount: 2,
        totalAmount: '7',
        spam: null,
      },
    ]);
  });

  it('hides contracts the whitelist hides', async () => {
    const org2 = await createOrganization(t);
    const api2 = nftApi(t, org2.adminKey);
    const wallet = await api2.wallet();
    const listed = newAddress();
    await api2.mint((await api2.token({ contractAddress: listed })).id, wallet.id);
    await api2.mint((await api2.token()).id, wallet.id);
    const base = '/api/organization/v1/current-organization/nft-whitelist';
    await t
      .http()
      .post(`${base}/contracts`)
      .set(bearer(org2.adminKey))
      .send({ contractAddresses: [listed] })
      .expect(200);
    await t.http().patch(base).set(bearer(org2.adminKey)).send({ enabled: true }).expect(200);
    const res = await collections(wallet.id, {}, org2.adminKey).expect(200);
    expect(res.body.collections.map((c: Collection) => c.contractAddress)).toEqual([checksum(listed)]);
  });

  it('answers 404 for an unknown or another organization’s wallet and 400 for bad input', async () => {
    const other = await createOrganization(t);
    const theirs = await nftApi(t, other.adminKey).wallet();
    expectProblem(await collections(UNKNOWN_ID), 404, 'WALLET_NOT_FOUND');
    expectProblem(await collections(theirs.id), 404, 'WALLET_NOT_FOUND');
    expectProblem(await collections(aliceWallet, { asOf: '2026-11-25T10:00:00' }), 400, 'VALIDATION_FAILED');
    expectProblem(await collections(aliceWallet, { spam: 'sometimes' }), 400, 'VALIDATION_FAILED');
    expectProblem(await collections(aliceWallet, { pageSize: '0' }), 400, 'VALIDATION_FAILED');
    expectProblem(await collections(aliceWallet, { pageKey: 'forged' }), 400, 'INVALID_PAGE_KEY');
    const forged = Buffer.from(JSON.stringify(["'; select 1 --", 1])).toString('base64url');
    expectProblem(await collections(aliceWallet, { pageKey: forged }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await collections('nope'), 400, 'INVALID_PATH_PARAMETER');
  });
});
