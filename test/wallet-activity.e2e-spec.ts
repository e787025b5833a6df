import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ERC1155_ABI, ERC721_ABI, LocalChain } from './support/evm';
import { startFollowing, waitApplied, walletAt } from './support/chain-fixture';
import { checksum, newAddress, nftApi, UNKNOWN_ID } from './support/nft';
import { waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';

interface Transfer {
  id: string;
  type: string;
  tokenId: string;
  fromWalletId: string | null;
  toWalletId: string | null;
  status: string;
  source: string;
  chain: { chainId: number; transactionHash: string; batchIndex: number | null } | null;
  createdAtUtc: string;
}

const newestFirst = (items: Transfer[]) =>
  [...items].sort((a, b) => (a.createdAtUtc === b.createdAtUtc ? (a.id < b.id ? 1 : -1) : a.createdAtUtc < b.createdAtUtc ? 1 : -1));

describe('GET /v1/wallets/{walletId}/transfers (API movements)', () => {
  let t: TestApp;
  let org: TestOrganization;
  let api: ReturnType<typeof nftApi>;

  beforeAll(async () => {
    t = await createTestApp({ ROLE: 'api' });
    org = await createOrganization(t);
    api = nftApi(t, org.adminKey);
  });
  afterAll(async () => {
    await t.close();
  });

  const feed = (walletId: string, query: Record<string, unknown> = {}, key = org.adminKey) =>
    t.http().get(`/v1/wallets/${walletId}/transfers`).query(query).set(bearer(key));

  async function walk(walletId: string, query: Record<string, unknown> = {}): Promise<Transfer[]> {
    const all: Transfer[] = [];
    let pageKey: string | null = null;
    do {
      const res: { body: { transfers: Transfer[]; nextPageKey: string | null } } = await feed(
        walletId,
        pageKey ? { ...query, pageKey } : query,
      ).expect(200);
      all.push(...res.body.transfers);
      pageKey = res.body.nextPageKey;
    } while (pageKey);
    return all;
  }

  it('lists every movement sent or received, each exactly as GET /v1/transactions/{id}, newest first', async () => {
    const [alice, bob, carol] = [await api.wallet(), await api.wallet(), await api.wallet()];
    const token = await api.token();
    const other = await api.token();
    const mint = await api.mint(token.id, alice.id, '5');
    const sent = await api.move({ tokenId: token.id, fromWalletId: alice.id, toWalletId: bob.id, amount: '2' });
    const burn = await api.move({ tokenId: token.id, fromWalletId: alice.id, amount: '1' });
    await api.mint(other.id, carol.id); // not alice's

    const res = await feed(alice.id).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['nextPageKey', 'transfers']);
    expect(res.body.nextPageKey).toBeNull();
    expect((res.body.transfers as Transfer[]).map((x) => x.id)).toEqual([burn.id, sent.id, mint.id]);
    for (const item of res.body.transfers as Transfer[]) {
      const one = await t.http().get(`/v1/transactions/${item.id}`).set(bearer(org.adminKey)).expect(200);
      expect(item).toEqual(one.body);
    }
    expect((await feed(bob.id).expect(200)).body.transfers.map((x: Transfer) => x.id)).toEqual([sent.id]);
  });

  it('pages by (createdAtUtc, id) without skipping or repeating while movements are recorded', async () => {
    const wallet = await api.wallet();
    const token = await api.token();
    const res = await t
      .http()
      .post('/v1/transactions/batch')
      .set(bearer(org.adminKey))
      .send({ transactions: Array.from({ length: 25 }, () => ({ tokenId: token.id, toWalletId: wallet.id })) })
      .expect(201);
    const first = await feed(wallet.id, { pageSize: 10 }).expect(200);
    expect(first.body.transfers).toHaveLength(10);
    // Recorded during the walk: newer than the cursor, so it does not disturb the pages that follow.
    const late = await api.mint(token.id, wallet.id);
    const rest = await walk(wallet.id, { pageSize: 10, pageKey: first.body.nextPageKey });
    const seen = [...first.body.transfers, ...rest].map((x: Transfer) => x.id);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(new Set(seen)).toEqual(new Set(res.body.transactions.map((x: { id: string }) => x.id)));
    expect([...first.body.transfers, ...rest]).toEqual(newestFirst([...first.body.transfers, ...rest]));
    expect((await feed(wallet.id, { pageSize: 1 }).expect(200)).body.transfers[0].id).toBe(late.id);
  });

  it('filters by types, contract, time, status and chain (all combined with AND)', async () => {
    const [alice, bob] = [await api.wallet(), await api.wallet()];
    const contract = newAddress();
    const token = await api.token({ contractAddress: contract });
    const other = await api.token();
    const mint = await api.mint(token.id, alice.id, '3');
    const otherMint = await api.mint(other.id, alice.id);
    const transfer = await api.move({ tokenId: token.id, fromWalletId: alice.id, toWalletId: bob.id });

    const ids = async (query: Record<string, unknown>) => (await walk(alice.id, query)).map((x) => x.id);
    expect(await ids({ types: 'nftMint' })).toEqual([otherMint.id, mint.id]);
    expect(await ids({ types: 'nftTransfer,nftBurn' })).toEqual([transfer.id]);
    expect(await ids({ contractAddress: checksum(contract) })).toEqual([transfer.id, mint.id]);
    expect(await ids({ contractAddress: contract.toUpperCase().replace('0X', '0x'), types: 'nftMint' })).toEqual([mint.id]);
    expect(await ids({ since: otherMint.createdAtUtc })).toEqual([transfer.id, otherMint.id]);
    expect(await ids({ until: otherMint.createdAtUtc })).toEqual([mint.id]);
    expect(await ids({ since: mint.createdAtUtc, until: transfer.createdAtUtc })).toEqual([otherMint.id, mint.id]);
    expect(await ids({ status: 'confirmed' })).toHaveLength(3);
    expect(await ids({ status: 'reverted' })).toEqual([]);
    expect(await ids({ chainId: '1' })).toEqual([]);
    expect(await ids({ spam: 'exclude' })).toHaveLength(3);
    expect(await ids({ spam: 'only' })).toEqual([]);
  });

  it('hides movements of contracts the whitelist hides', async () => {
    const org2 = await createOrganization(t);
    const api2 = nftApi(t, org2.adminKey);
    const wallet = await api2.wallet();
    const listed = newAddress();
    const shown = await api2.mint((await api2.token({ contractAddress: listed })).id, wallet.id);
    await api2.mint((await api2.token()).id, wallet.id);
    const base = '/api/organization/v1/current-organization/nft-whitelist';
    await t
      .http()
      .post(`${base}/contracts`)
      .set(bearer(org2.adminKey))
      .send({ contractAddresses: [listed] })
      .expect(200);
    await t.http().patch(base).set(bearer(org2.adminKey)).send({ enabled: true }).expect(200);
    const res = await feed(wallet.id, {}, org2.adminKey).expect(200);
    expect(res.body.transfers.map((x: Transfer) => x.id)).toEqual([shown.id]);
  });

  it('answers 404 WALLET_NOT_FOUND for an unknown or another organization’s wallet', async () => {
    const other = await createOrganization(t);
    const theirs = await nftApi(t, other.adminKey).wallet();
    expectProblem(await feed(UNKNOWN_ID), 404, 'WALLET_NOT_FOUND');
    expectProblem(await feed(theirs.id), 404, 'WALLET_NOT_FOUND');
  });

  it('needs the read role', async () => {
    const wallet = await api.wallet();
    const writeOnly = await createApiKey(t, org.id, ['write']);
    const readOnly = await createApiKey(t, org.id, ['read']);
    expectProblem(await feed(wallet.id, {}, writeOnly.key), 403, 'FORBIDDEN');
    await feed(wallet.id, {}, readOnly.key).expect(200);
  });

  it.each([
    [{ types: '' }, 'types'],
    [{ types: 'nftMint,nftSwap' }, 'types'],
    [{ since: '2026-11-25T10:00:00' }, 'since'],
    [{ until: 'yesterday' }, 'until'],
    [{ status: 'pending' }, 'status'],
    [{ chainId: '1.5' }, 'chainId'],
    [{ spam: 'maybe' }, 'spam'],
    [{ pageSize: '101' }, 'pageSize'],
    [{ pageSize: '0' }, 'pageSize'],
    [{ contractAddress: '0x123' }, 'contractAddress'],
  ])('answers 400 for %j', async (query, field) => {
    const wallet = await api.wallet();
    const res = await feed(wallet.id, query);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('answers 400 for a forged page key, a bad checksum and a bad wallet id', async () => {
    const wallet = await api.wallet();
    const forged = Buffer.from(JSON.stringify(['2026-11-25 10:00:00', UNKNOWN_ID])).toString('base64url');
    expectProblem(await feed(wallet.id, { pageKey: forged }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await feed(wallet.id, { pageKey: 'not-a-key' }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await feed(wallet.id, { contractAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }), 400, 'INVALID_ADDRESS');
    expectProblem(await feed('not-a-uuid'), 400, 'INVALID_PATH_PARAMETER');
  });
});

describe('GET /v1/wallets/{walletId}/transfers (chain movements)', () => {
  let chain: LocalChain;
  let t: TestApp;
  let org: TestOrganization;
  let alice: `0x${string}`, bob: `0x${string}`, carol: `0x${string}`;
  let aliceWallet: string;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31601 });
    [, alice, bob, carol] = chain.accounts;
    t = await startFollowing(chain);
    org = await createOrganization(t);
    aliceWallet = await walletAt(t, org, alice, 'alice');
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  const walk = async (query: Record<string, unknown> = {}): Promise<Transfer[]> => {
    const res = await t.http().get(`/v1/wallets/${aliceWallet}/transfers`).query(query).set(bearer(org.adminKey)).expect(200);
    return res.body.transfers as Transfer[];
  };

  it('shows both standards, a batch item by item, deposits and withdrawals, filtered by chain', async () => {
    const nft = await chain.deployErc721();
    const multi = await chain.deployErc1155();
    await chain.write(nft, ERC721_ABI, 'mint', [bob, 1n]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [bob, alice, 1n], bob);
    await chain.write(multi, ERC1155_ABI, 'mintBatch', [alice, [7n, 8n], [3n, 4n]]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, carol, 1n], alice);
    await waitApplied(t, chain);
    const items = await waitUntil(
      () => walk(),
      (list) => list.length === 4,
    );
    expect(items.map((x) => [x.type, x.chain?.batchIndex ?? null])).toEqual([
      ['nftWithdrawal', null],
      ['nftMint', 1],
      ['nftMint', 0],
      ['nftDeposit', null],
    ]);
    expect(items.every((x) => x.source === 'chain' && x.status === 'confirmed')).toBe(true);
    expect((await walk({ chainId: String(chain.chainId) })).map((x) => x.id)).toEqual(items.map((x) => x.id));
    expect(await walk({ chainId: '1' })).toEqual([]);
    expect((await walk({ contractAddress: multi })).map((x) => x.chain?.batchIndex)).toEqual([1, 0]);
    expect((await walk({ types: 'nftDeposit,nftWithdrawal' })).map((x) => x.type)).toEqual(['nftWithdrawal', 'nftDeposit']);
  });

  it('keeps the movements of an orphaned block with status reverted, beside the canonical ones', async () => {
    const nft = await chain.deployErc721();
    await waitApplied(t, chain);
    const fork = await chain.snapshot();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 5n]);
    await waitApplied(t, chain);
    const [orphan] = await waitUntil(
      () => walk({ contractAddress: nft }),
      (list) => list.length === 1,
    );
    await chain.revert(fork);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 5n]);
    await chain.mine(2);
    await waitApplied(t, chain);
    const items = await waitUntil(
      () => walk({ contractAddress: nft }),
      (list) => list.length === 2 && list.some((x) => x.status === 'reverted'),
    );
    expect(items.find((x) => x.status === 'reverted')!.id).toBe(orphan.id);
    expect(items.find((x) => x.status === 'confirmed')!.id).not.toBe(orphan.id);
    expect((await walk({ contractAddress: nft, status: 'confirmed' })).map((x) => x.status)).toEqual(['confirmed']);
    expect((await walk({ contractAddress: nft, status: 'reverted' })).map((x) => x.id)).toEqual([orphan.id]);
  });
});
