import { EntityManager } from '@mikro-orm/postgresql';
import { getAddress } from 'viem';
import { ChainMovement, ChainMovementsService } from '../src/modules/transactions/chain-movements.service';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { newAddress, nftApi, sql, UNKNOWN_ID } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

/** GET /v2/wallets/{walletId}/nft-balances?asOf=: holdings at a past instant, from the movement ledger. */
const CHAIN = 900_000 + Math.floor(Math.random() * 90_000);
const ZERO = '0x0000000000000000000000000000000000000000';
const WHITELIST = '/api/organization/v1/current-organization/nft-whitelist';

describe('nft-balances asOf', () => {
  let t: TestApp;
  let org: TestOrganization;
  let api: ReturnType<typeof nftApi>;
  let walletId: string;
  let otherId: string;
  const address = newAddress();
  let block = 1000;

  const record = (movements: ChainMovement[]) =>
    t.app
      .get(EntityManager)
      .fork()
      .transactional((em) => t.app.get(ChainMovementsService).record(em, movements));
  const revertFrom = (fromBlock: number) =>
    t.app
      .get(EntityManager)
      .fork()
      .transactional((em) => t.app.get(ChainMovementsService).revertFrom(em, CHAIN, fromBlock));
  const chainMove = (at: string, from: string, to: string, contract: string, id: string, amount = '1'): ChainMovement => {
    block += 1;
    return {
      chainId: CHAIN,
      blockNumber: block,
      blockHash: `0x${block.toString(16).padStart(64, 'b')}`,
      blockTimestamp: new Date(at),
      transactionHash: `0x${block.toString(16).padStart(64, 'c')}`,
      logIndex: 0,
      batchIndex: null,
      contractAddress: contract,
      blockchainTokenId: id,
      amount,
      from,
      to,
      standard: 'erc1155',
    };
  };
  /** The whole holding at `asOf` (every page), as tokenId -> amount. */
  const heldAt = async (asOf: string | undefined, pageSize = 1000, wallet = walletId): Promise<Record<string, string>> => {
    const held: Record<string, string> = {};
    let pageKey: string | null = null;
    do {
      const query: Record<string, unknown> = { pageSize };
      if (asOf !== undefined) query.asOf = asOf;
      if (pageKey) query.pageKey = pageKey;
      const res: { body: { nftTokenBalances: { tokenId: string; amount: string }[]; nextPageKey: string | null } } = await api
        .balancesPage(wallet, query)
        .expect(200);
      for (const b of res.body.nftTokenBalances) {
        expect(held[b.tokenId]).toBeUndefined();
        held[b.tokenId] = b.amount;
      }
      pageKey = res.body.nextPageKey;
    } while (pageKey);
    return held;
  };
  const chainTokenId = async (contract: string, id: string) =>
    (
      await sql<{ id: string }>(
        t,
        'select "id" from "token" where "organization_id" = ? and "chain_id" = ? and "contract_address" = ? and "blockchain_token_id" = ?',
        [org.id, CHAIN, contract, id],
      )
    )[0].id;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    api = nftApi(t, org.adminKey);
    walletId = (await api.wallet({ address: getAddress(address) })).id;
    otherId = (await api.wallet()).id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers API movements by their createdAtUtc, a movement at exactly asOf included', async () => {
    const token = await api.token();
    const mint = await api.mint(token.id, walletId, '3');
    await new Promise((r) => setTimeout(r, 5));
    const transfer = await api.move({ tokenId: token.id, fromWalletId: walletId, toWalletId: otherId, amount: '1' });
    const justBefore = new Date(new Date(mint.createdAtUtc).getTime() - 1).toISOString().replace('Z', '+00:00');

    expect(await heldAt(justBefore)).toEqual({});
    expect(await heldAt(mint.createdAtUtc)).toEqual({ [token.id]: '3' });
    expect(await heldAt(transfer.createdAtUtc)).toEqual({ [token.id]: '2' });
    expect(await heldAt(transfer.createdAtUtc, 1000, otherId)).toEqual({ [token.id]: '1' });
    // The same instant in another offset.
    const shifted = new Date(new Date(mint.createdAtUtc).getTime() + 2 * 3600_000).toISOString().slice(0, 23);
    expect(await heldAt(`${shifted}+02:00`)).toEqual({ [token.id]: '3' });
    // Now (or later) is exactly what the balances say without asOf.
    expect(await heldAt('2999-01-01T00:00:00Z')).toEqual(await heldAt(undefined));
  });

  it('answers chain movements by their block time, and leaves reverted ones out', async () => {
    const contract = newAddress();
    await record([chainMove('2026-01-01T00:00:00Z', ZERO, address, contract, '1', '5')]);
    const withdrawalBlock = block + 1;
    await record([chainMove('2026-01-02T00:00:00Z', address, newAddress(), contract, '1', '2')]);
    const tokenId = await chainTokenId(contract, '1');

    expect((await heldAt('2025-12-31T23:59:59.999999+00:00'))[tokenId]).toBeUndefined();
    expect((await heldAt('2026-01-01T00:00:00+00:00'))[tokenId]).toBe('5');
    expect((await heldAt('2026-01-01T23:59:59Z'))[tokenId]).toBe('5');
    expect((await heldAt('2026-01-02T01:00:00+01:00'))[tokenId]).toBe('3');

    expect(await revertFrom(withdrawalBlock)).toBe(1);
    expect((await heldAt('2026-01-02T01:00:00+01:00'))[tokenId]).toBe('5');
    expect((await heldAt(undefined))[tokenId]).toBe('5');
  });

  it('pages by tokenId, applies the whitelist and the contract filter, like the current balances', async () => {
    const [shown, hidden] = [newAddress(), newAddress()];
    const at = '2026-03-01T12:00:00Z';
    await record([
      ...['11', '12', '13', '14', '15'].map((id) => chainMove(at, ZERO, address, shown, id)),
      chainMove(at, ZERO, address, hidden, '16'),
    ]);
    const shownIds = await Promise.all(['11', '12', '13', '14', '15'].map((id) => chainTokenId(shown, id)));
    const hiddenId = await chainTokenId(hidden, '16');

    const before = await heldAt('2026-03-01T11:59:59Z');
    const after = await heldAt(at, 2);
    expect(Object.keys(after).sort()).toEqual([...Object.keys(before), ...shownIds, hiddenId].sort());
    // Pages come in tokenId order, full but the last.
    const page = await api.balancesPage(walletId, { asOf: at, pageSize: 2 }).expect(200);
    expect(page.body.nftTokenBalances).toHaveLength(2);
    expect(page.body.nftTokenBalances.map((b: { tokenId: string }) => b.tokenId)).toEqual(Object.keys(after).sort().slice(0, 2));
    expect(page.body.nftTokenBalances[0].token).toEqual(
      (
        await t
          .http()
          .get(`/v1/tokens/${page.body.nftTokenBalances[0].tokenId as string}`)
          .set(api.auth)
          .expect(200)
      ).body,
    );

    const filtered = await api.balancesPage(walletId, { asOf: at, contractAddress: getAddress(shown) }).expect(200);
    expect(filtered.body.nftTokenBalances.map((b: { tokenId: string }) => b.tokenId)).toEqual([...shownIds].sort());

    await t.http().patch(WHITELIST).set(api.auth).send({ enabled: true }).expect(200);
    await t
      .http()
      .post(`${WHITELIST}/contracts`)
      .set(api.auth)
      .send({ contractAddresses: [getAddress(shown)] })
      .expect(200);
    expect(Object.keys(await heldAt(at, 2)).sort()).toEqual([...shownIds].sort());
    expect(Object.keys(await heldAt(at, 2)).sort()).toEqual(Object.keys(await heldAt(undefined, 3)).sort());
    await t.http().patch(WHITELIST).set(api.auth).send({ enabled: false }).expect(200);
  });

  it('refuses a bad asOf with 400 problem details, and an unknown wallet with 404', async () => {
    for (const asOf of ['2026-11-25T10:00:00', '2026-11-25', 'yesterday', '2026-02-30T00:00:00Z', '2026-11-25T25:00:00Z', '']) {
      const res = await api.balancesPage(walletId, { asOf });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'asOf' })]);
    }
    const twice = await t
      .http()
      .get(`/v2/wallets/${walletId}/nft-balances?asOf=2026-01-01T00:00:00Z&asOf=2026-01-02T00:00:00Z`)
      .set(api.auth);
    expectProblem(twice, 400, 'VALIDATION_FAILED');
    // An unencoded "+" arrives as a space and is read as "+".
    const raw = await t.http().get(`/v2/wallets/${walletId}/nft-balances?asOf=2026-01-01T01:00:00+01:00`).set(api.auth).expect(200);
    expect(raw.body.nftTokenBalances).toEqual(
      (await api.balancesPage(walletId, { asOf: '2026-01-01T00:00:00Z' }).expect(200)).body.nftTokenBalances,
    );

    expectProblem(await api.balancesPage(UNKNOWN_ID, { asOf: '2026-01-01T00:00:00Z' }), 404, 'WALLET_NOT_FOUND');
    const stranger = await createOrganization(t);
    expectProblem(
      await t.http().get(`/v2/wallets/${walletId}/nft-balances`).query({ asOf: '2026-01-01T00:00:00Z' }).set(bearer(stranger.adminKey)),
      404,
      'WALLET_NOT_FOUND',
    );
  });
});
