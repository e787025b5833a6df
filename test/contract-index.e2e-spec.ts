import { Address, getAddress } from 'viem';
import { startFollowing } from './support/chain-fixture';
import {
  allHolders,
  allTransfers,
  contractView,
  ContractView,
  expectedHolders,
  expectedOwners,
  rawMovements,
  registerContract,
  waitIndexed,
} from './support/contract-index';
import { ERC1155_ABI, ERC721_ABI, LocalChain } from './support/evm';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { waitUntil } from './support/receiver';
import { TestApp } from './support/test-app';

const CONFIRMATIONS = 2;

// Every holder of a contract, watched or not, at any indexed block: a backfill from fromBlock,
// then the chain followed up to head − CHAIN_CONFIRMATIONS, checked against the node's own logs.
describe('Whole-contract index', () => {
  let chain: LocalChain;
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let alice: Address, bob: Address, carol: Address, dave: Address;
  let nft: Address;
  let multi: Address;
  let nftFrom: number;
  let multiFrom: number;
  let nftContract: ContractView;
  let multiContract: ContractView;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31701 });
    [, alice, bob, carol, dave] = chain.accounts;
    t = await startFollowing(chain, { CHAIN_CONFIRMATIONS: String(CONFIRMATIONS) });
    org = await createOrganization(t);
    other = await createOrganization(t);

    // History before the registration: the backfill reads it.
    nft = getAddress(await chain.deployErc721());
    nftFrom = await chain.blockNumber();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 1n]);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 2n]);
    await chain.write(nft, ERC721_ABI, 'mint', [bob, 3n]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, carol, 1n], alice);
    // A quiet stretch, its blocks seconds apart: `asOf` inside it needs the node's block times.
    await chain.request('evm_increaseTime', [100]);
    await chain.mine(4);
    await chain.write(nft, ERC721_ABI, 'burn', [3n], bob);

    multi = getAddress(await chain.deployErc1155());
    multiFrom = await chain.blockNumber();
    await chain.write(multi, ERC1155_ABI, 'mint', [alice, 7n, 10n]);
    await chain.write(multi, ERC1155_ABI, 'mintBatch', [bob, [7n, 8n, 9n], [5n, 1n, 2n]]);
    await chain.write(multi, ERC1155_ABI, 'safeBatchTransferFrom', [bob, carol, [7n, 9n], [2n, 2n], '0x'], bob);
    await chain.mine(CONFIRMATIONS);
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  it('registers a contract with its ERC-165 standard and backfills it up to head − confirmations, then reports live', async () => {
    nftContract = await registerContract(t, org, { chainId: chain.chainId, address: nft.toLowerCase(), fromBlock: nftFrom });
    expect(nftContract).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      chainId: chain.chainId,
      address: nft,
      fromBlock: nftFrom,
      standard: 'erc721',
      status: expect.stringMatching(/^(backfilling|live)$/),
      indexedBlock: expect.any(Number),
      createdAtUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
      spam: { isSpam: false, reasons: [], source: 'rules' },
    });
    multiContract = await registerContract(t, org, { chainId: chain.chainId, address: multi, fromBlock: multiFrom });
    expect(multiContract.standard).toBe('erc1155');

    const head = await chain.blockNumber();
    const live = await waitUntil(
      () => contractView(t, org, multiContract.id),
      (c) => c.status === 'live' && c.indexedBlock === head - CONFIRMATIONS,
    );
    expect(live.indexedBlock).toBe(head - CONFIRMATIONS);
    const nftLive = await waitIndexed(t, org, nftContract.id, head - CONFIRMATIONS);
    expect(nftLive).toMatchObject({ status: 'live', indexedBlock: head - CONFIRMATIONS });

    const list = await t.http().get('/v1/contracts').query({ pageSize: 1 }).set(bearer(org.adminKey)).expect(200);
    expect(list.body.contracts.map((c: ContractView) => c.id)).toEqual([nftContract.id]);
    const rest = await t
      .http()
      .get('/v1/contracts')
      .query({ pageSize: 1, pageKey: list.body.nextPageKey })
      .set(bearer(org.adminKey))
      .expect(200);
    expect(rest.body).toEqual({ contracts: [expect.objectContaining({ id: multiContract.id })], nextPageKey: null });
  });

  it('answers the holders at three blocks exactly as the raw logs sum up, in amount then address order, on every page', async () => {
    const head = (await contractView(t, org, nftContract.id)).indexedBlock;
    const raw = await rawMovements(chain, nft, nftFrom, head);
    const mintBlock = raw[1].blockNumber;
    const transferBlock = raw[3].blockNumber;
    for (const block of [mintBlock, transferBlock, head]) {
      const answer = await allHolders(t, org, nftContract.id, { atBlock: block });
      expect(answer).toEqual({ blockNumber: block, holders: expectedHolders(raw, block) });
    }
    // At the head: carol 1, alice 1 (token 3 burnt), the zero address never.
    expect((await allHolders(t, org, nftContract.id, {})).holders.map((h) => h.address).sort()).toEqual([alice, carol].sort());

    const multiHead = (await contractView(t, org, multiContract.id)).indexedBlock;
    const multiRaw = await rawMovements(chain, multi, multiFrom, multiHead);
    expect(multiRaw.filter((m) => m.batchIndex !== null)).toHaveLength(5);
    for (const block of [multiRaw[0].blockNumber, multiRaw[1].blockNumber, multiHead]) {
      const answer = await allHolders(t, org, multiContract.id, { atBlock: block }, 1);
      expect(answer).toEqual({ blockNumber: block, holders: expectedHolders(multiRaw, block) });
    }
    // bob: 3 of id 7 and 1 of id 8 (id 9 all sent): tokenCount 2, amount 4.
    const { holders } = await allHolders(t, org, multiContract.id, {});
    expect(holders.find((h) => h.address === bob)).toEqual({ address: bob, tokenCount: 2, amount: '4' });
  });

  it('lists the owners of one token at a block, and every transfer in chain order with batch positions', async () => {
    const head = (await contractView(t, org, multiContract.id)).indexedBlock;
    const raw = await rawMovements(chain, multi, multiFrom, head);
    for (const block of [raw[0].blockNumber, head]) {
      const res = await t
        .http()
        .get(`/v1/contracts/${multiContract.id}/tokens/7/owners`)
        .query({ atBlock: block })
        .set(bearer(org.adminKey));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ blockNumber: block, owners: expectedOwners(raw, '7', block) });
    }
    expect(await allTransfers(t, org, multiContract.id)).toEqual(raw);
    const nftHead = (await contractView(t, org, nftContract.id)).indexedBlock;
    const nftRaw = await rawMovements(chain, nft, nftFrom, nftHead);
    expect(await allTransfers(t, org, nftContract.id)).toEqual(nftRaw);
    // Bounds are inclusive; blocks past the index simply have none yet.
    const one = nftRaw[3].blockNumber;
    expect(await allTransfers(t, org, nftContract.id, { fromBlock: one, toBlock: one })).toEqual([nftRaw[3]]);
    expect(await allTransfers(t, org, nftContract.id, { fromBlock: nftHead + 100, toBlock: nftHead + 200 })).toEqual([]);
  });

  it('answers asOf with the last indexed block whose time is at or before it', async () => {
    const head = (await contractView(t, org, nftContract.id)).indexedBlock;
    const raw = await rawMovements(chain, nft, nftFrom, head);
    const times: { n: number; time: number }[] = [];
    for (let n = nftFrom; n <= head; n++) {
      times.push({ n, time: Number((await chain.publicClient.getBlock({ blockNumber: BigInt(n) })).timestamp) });
    }
    // A block of the quiet stretch (no transfer there), and a transfer's block.
    const burnBlock = raw[raw.length - 1].blockNumber;
    for (const at of [times.find((b) => b.n === burnBlock - 2)!, times.find((b) => b.n === raw[2].blockNumber)!]) {
      const expected = Math.max(...times.filter((b) => b.time <= at.time).map((b) => b.n));
      const asOf = new Date(at.time * 1000).toISOString().replace('Z', '+00:00');
      const answer = await allHolders(t, org, nftContract.id, { asOf });
      expect(answer).toEqual({ blockNumber: expected, holders: expectedHolders(raw, expected) });
    }
  });

  it('follows the chain live: new transfers appear once they have the confirmations, never before', async () => {
    await chain.write(nft, ERC721_ABI, 'mint', [dave, 40n]);
    const mintBlock = await chain.blockNumber();
    await chain.mine(CONFIRMATIONS - 1);
    // One block short of the confirmations: the index stops before the mint.
    const before = await waitIndexed(t, org, nftContract.id, mintBlock - 1);
    expect(before.indexedBlock).toBe(mintBlock - 1);
    const early = await t.http().get(`/v1/contracts/${nftContract.id}/holders`).set(bearer(org.adminKey)).expect(200);
    expect(early.body.holders.map((h: { address: string }) => h.address)).not.toContain(dave);
    await chain.mine(1);
    await waitIndexed(t, org, nftContract.id, mintBlock);
    const raw = await rawMovements(chain, nft, nftFrom, mintBlock);
    expect(await allHolders(t, org, nftContract.id, {})).toEqual({ blockNumber: mintBlock, holders: expectedHolders(raw, mintBlock) });
    expect((await contractView(t, org, nftContract.id)).indexedBlock).toBe((await chain.blockNumber()) - CONFIRMATIONS);
  });

  it('judges a mass airdrop it indexed, to holders no wallet watches, and shows it on the contract', async () => {
    const owner = await createOrganization(t);
    const drop = getAddress(await chain.deployErc721());
    const from = await chain.blockNumber();
    const strangers = Array.from({ length: 50 }, (_, i) => `0x${(0x7000 + i).toString(16).padStart(40, '0')}`);
    await chain.write(drop, ERC721_ABI, 'mintMany', [strangers, 1000n]);
    await chain.mine(CONFIRMATIONS);
    const registered = await registerContract(t, owner, { chainId: chain.chainId, address: drop, fromBlock: from });
    const judged = await waitUntil(
      () => t.http().get(`/v1/contracts/${registered.id}`).set(bearer(owner.adminKey)),
      (res) => res.status === 200 && res.body.spam.isSpam === true,
      30_000,
    );
    expect(judged.body.spam).toEqual({ isSpam: true, reasons: ['massAirdrop'], source: 'rules' });
    // Another organization's override decides for it alone.
    await t
      .http()
      .put(`/api/organization/v1/current-organization/spam-overrides/${chain.chainId}/${drop}`)
      .set(bearer(owner.adminKey))
      .send({ isSpam: false })
      .expect(200);
    const overridden = await t.http().get(`/v1/contracts/${registered.id}`).set(bearer(owner.adminKey)).expect(200);
    expect(overridden.body.spam).toEqual({ isSpam: false, reasons: ['massAirdrop'], source: 'organization' });
  });

  it('accepts an address without code, with a null standard', async () => {
    const c = await registerContract(t, org, { chainId: chain.chainId, address: dave.toUpperCase().replace('0X', '0x'), fromBlock: 0 });
    expect(c).toMatchObject({ address: dave, standard: null, fromBlock: 0 });
    await t.http().delete(`/v1/contracts/${c.id}`).set(bearer(org.adminKey)).expect(204);
    expectProblem(await t.http().get(`/v1/contracts/${c.id}`).set(bearer(org.adminKey)), 404, 'CONTRACT_NOT_FOUND');
  });

  it('refuses every bad input with problem details and changes nothing', async () => {
    const key = bearer(org.adminKey);
    const post = (body: unknown) =>
      t
        .http()
        .post('/v1/contracts')
        .set(key)
        .send(body as object);
    const valid = { chainId: chain.chainId, address: nft, fromBlock: 0 };
    for (const body of [
      { ...valid, chainId: '1' },
      { ...valid, chainId: 1.5 },
      { ...valid, fromBlock: -1 },
      { ...valid, fromBlock: '0' },
      { ...valid, address: 'nope' },
      { ...valid, address: nft.toLowerCase().replace('0x', '0x0') },
      { ...valid, extra: true },
      { chainId: chain.chainId, address: nft },
    ]) {
      expect((await post(body)).status).toBe(400);
    }
    // A mixed-case address with a wrong checksum.
    const wrongCase =
      nft.slice(0, 2) +
      nft
        .slice(2)
        .split('')
        .map((c) => (/[a-f]/.test(c) ? c.toUpperCase() : /[A-F]/.test(c) ? c.toLowerCase() : c))
        .join('');
    expectProblem(await post({ ...valid, address: wrongCase }), 400, 'INVALID_ADDRESS');
    expectProblem(await post({ ...valid, chainId: 999_999 }), 422, 'UNKNOWN_CHAIN');
    expectProblem(await post({ ...valid, address: nft.toLowerCase() }), 409, 'CONTRACT_ALREADY_INDEXED');

    const id = nftContract.id;
    const indexed = (await contractView(t, org, id)).indexedBlock;
    const holders = (query: Record<string, string | number>) => t.http().get(`/v1/contracts/${id}/holders`).query(query).set(key);
    expectProblem(await holders({ atBlock: 1, asOf: '2026-01-01T00:00:00+00:00' }), 400, 'VALIDATION_FAILED');
    expectProblem(await holders({ atBlock: 'x' }), 400, 'VALIDATION_FAILED');
    expectProblem(await holders({ atBlock: '-1' }), 400, 'VALIDATION_FAILED');
    expectProblem(await holders({ asOf: '2026-01-01T00:00:00' }), 400, 'VALIDATION_FAILED');
    expectProblem(await holders({ pageKey: 'forged' }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await holders({ pageSize: 0 }), 400, 'VALIDATION_FAILED');
    expectProblem(await holders({ atBlock: indexed + 1 }), 422, 'NOT_YET_INDEXED');
    expectProblem(await holders({ atBlock: nftFrom - 1 }), 422, 'BEFORE_INDEXED_RANGE');
    expectProblem(await holders({ asOf: '1971-01-01T00:00:00+00:00' }), 422, 'BEFORE_INDEXED_RANGE');
    const owners = (tokenId: string, query: Record<string, string | number> = {}) =>
      t.http().get(`/v1/contracts/${id}/tokens/${tokenId}/owners`).query(query).set(key);
    expectProblem(await owners('01'), 400, 'VALIDATION_FAILED');
    expectProblem(await owners('1', { atBlock: 1, asOf: '2026-01-01T00:00:00+00:00' }), 400, 'VALIDATION_FAILED');
    expectProblem(await owners('1', { atBlock: indexed + 5 }), 422, 'NOT_YET_INDEXED');
    const transfers = (query: Record<string, string | number>) => t.http().get(`/v1/contracts/${id}/transfers`).query(query).set(key);
    expectProblem(await transfers({ fromBlock: 'a' }), 400, 'VALIDATION_FAILED');
    expectProblem(await transfers({ pageKey: 'Zm9yZ2Vk' }), 400, 'INVALID_PAGE_KEY');
    expectProblem(await t.http().get('/v1/contracts/not-a-uuid').set(key), 400, 'INVALID_PATH_PARAMETER');
    expectProblem(await t.http().get('/v1/contracts').query({ pageKey: 'forged' }).set(key), 400, 'INVALID_PAGE_KEY');

    // Unknown and another organization's ids look the same.
    const unknown = '01900000-0000-7000-8000-000000000000';
    for (const path of ['', '/holders', '/transfers', '/tokens/1/owners']) {
      expectProblem(await t.http().get(`/v1/contracts/${unknown}${path}`).set(key), 404, 'CONTRACT_NOT_FOUND');
      expectProblem(await t.http().get(`/v1/contracts/${id}${path}`).set(bearer(other.adminKey)), 404, 'CONTRACT_NOT_FOUND');
    }
    expectProblem(await t.http().delete(`/v1/contracts/${id}`).set(bearer(other.adminKey)), 404, 'CONTRACT_NOT_FOUND');
    const otherList = await t.http().get('/v1/contracts').set(bearer(other.adminKey)).expect(200);
    expect(otherList.body).toEqual({ contracts: [], nextPageKey: null });

    // Roles: read may read, not register or delete.
    const reader = await createApiKey(t, org.id, ['read']);
    await t.http().get(`/v1/contracts/${id}`).set(bearer(reader.key)).expect(200);
    expectProblem(await t.http().post('/v1/contracts').set(bearer(reader.key)).send(valid), 403, 'FORBIDDEN');
    expectProblem(await t.http().delete(`/v1/contracts/${id}`).set(bearer(reader.key)), 403, 'FORBIDDEN');

    // Nothing changed.
    const list = await t.http().get('/v1/contracts').set(key).expect(200);
    expect(list.body.contracts.map((c: ContractView) => c.id)).toEqual([nftContract.id, multiContract.id]);
  });

  it('indexes at most 20 contracts per organization', async () => {
    const third = await createOrganization(t);
    for (let i = 0; i < 20; i++) {
      const address = `0x${(i + 1).toString(16).padStart(40, '0')}`;
      await registerContract(t, third, { chainId: chain.chainId, address, fromBlock: 0 });
    }
    const res = await t
      .http()
      .post('/v1/contracts')
      .set(bearer(third.adminKey))
      .send({ chainId: chain.chainId, address: nft, fromBlock: 0 });
    expectProblem(res, 422, 'CONTRACT_LIMIT_REACHED');
    const list = await t.http().get('/v1/contracts').set(bearer(third.adminKey)).expect(200);
    expect(list.body.contracts).toHaveLength(20);
  });
});

// A block that stops being canonical: its transfers vanish from every read, the canonical ones appear.
describe('Whole-contract index: reorgs', () => {
  let chain: LocalChain;
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31702 });
    t = await startFollowing(chain);
    org = await createOrganization(t);
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  it('drops the orphaned blocks’ transfers and holders and indexes the canonical ones', async () => {
    const [, alice, bob, carol] = chain.accounts;
    const nft = await chain.deployErc721();
    const from = await chain.blockNumber();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 1n]);
    const contract = await registerContract(t, org, { chainId: chain.chainId, address: nft, fromBlock: from });
    await waitIndexed(t, org, contract.id, await chain.blockNumber());

    const fork = await chain.snapshot();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 2n]);
    const orphan = await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, bob, 2n], alice);
    const forkHead = await chain.blockNumber();
    await waitIndexed(t, org, contract.id, forkHead);
    expect((await allHolders(t, org, contract.id, {})).holders.map((h) => h.address)).toContain(bob);

    await chain.revert(fork);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 2n]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, carol, 2n], alice);
    await chain.mine(2);
    const canonicalHead = await chain.blockNumber();
    expect(canonicalHead).toBeGreaterThan(forkHead);
    await waitUntil(
      () => allTransfers(t, org, contract.id),
      (list) => list.length === 3 && list[2].to === carol,
    );
    await waitIndexed(t, org, contract.id, canonicalHead);

    const raw = await rawMovements(chain, nft, from, canonicalHead);
    const transfers = await allTransfers(t, org, contract.id);
    expect(transfers).toEqual(raw);
    expect(transfers.map((x) => x.transactionHash)).not.toContain(orphan.transactionHash);
    const holders = await allHolders(t, org, contract.id, {});
    expect(holders).toEqual({ blockNumber: canonicalHead, holders: expectedHolders(raw, canonicalHead) });
    expect(holders.holders.map((h) => h.address)).not.toContain(bob);
    // The orphaned blocks' numbers now answer the canonical blocks' holdings.
    for (let n = from; n <= canonicalHead; n++) {
      expect(await allHolders(t, org, contract.id, { atBlock: n })).toEqual({ blockNumber: n, holders: expectedHolders(raw, n) });
    }
    const owners = await t.http().get(`/v1/contracts/${contract.id}/tokens/2/owners`).set(bearer(org.adminKey)).expect(200);
    expect(owners.body.owners).toEqual([{ address: carol, amount: '1' }]);
  });

  it('takes back indexed blocks the node no longer has when it falls behind the index', async () => {
    const [, alice] = chain.accounts;
    const nft = await chain.deployErc721();
    const from = await chain.blockNumber();
    const contract = await registerContract(t, org, { chainId: chain.chainId, address: nft, fromBlock: from });
    await waitIndexed(t, org, contract.id, from);
    const fork = await chain.snapshot();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 10n]);
    await waitIndexed(t, org, contract.id, await chain.blockNumber());
    expect(await allTransfers(t, org, contract.id)).toHaveLength(1);
    await chain.revert(fork);
    await waitUntil(
      () => allTransfers(t, org, contract.id),
      (list) => list.length === 0,
    );
    expect((await allHolders(t, org, contract.id, {})).holders).toEqual([]);
  });
});
