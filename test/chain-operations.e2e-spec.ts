import { getAddress } from 'viem';
import { privateKeyToAddress, generatePrivateKey } from 'viem/accounts';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { configureWebhooks } from './support/webhooks';
import { ERC721_ABI, LocalChain } from './support/evm';
import {
  balances,
  isTransactionEvent,
  SECRET,
  startFollowing,
  transactionsFromWebhooks,
  waitApplied,
  walletAt,
  watchingOrganization,
} from './support/chain-fixture';
import { sql } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { TestApp } from './support/test-app';

const randomAddress = () => privateKeyToAddress(generatePrivateKey()).toLowerCase();

describe('Following a chain: operations', () => {
  let chain: LocalChain;
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31410 });
    receiver = await new TestReceiver().start();
    t = await startFollowing(chain);
    org = await watchingOrganization(t, receiver);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  it('GET /admin/v1/chains and /metrics show head, applied block and lag per chain', async () => {
    await chain.mine(3);
    const head = await chain.blockNumber();
    await waitApplied(t, chain, head);
    const res = await t
      .http()
      .get('/admin/v1/chains')
      .set(bearer(process.env.OPERATOR_KEY ?? 'test-operator-key-0123456789abcdef'))
      .expect(200);
    expect(res.body).toEqual({
      chains: [{ chainId: 31410, headBlock: head, appliedBlock: head, lagBlocks: 0, lagSeconds: 0, lastError: null }],
    });
    // Operator only.
    await t.http().get('/admin/v1/chains').set(bearer(org.adminKey)).expect(401);

    const metrics = (await t.http().get('/metrics').expect(200)).text;
    expect(metrics).toContain(`chain_head_block{chainId="31410"} ${head}`);
    expect(metrics).toContain(`chain_applied_block{chainId="31410"} ${head}`);
    expect(metrics).toContain('chain_lag_blocks{chainId="31410"} 0');
    expect(metrics).toContain('chain_node_up{chainId="31410"} 1');
    expect(metrics).toMatch(/chain_blocks_applied_total\{chainId="31410"\} \d+/);
  });

  it('follows 1,000 watched wallets: one mint each, every one recorded once with its webhook', async () => {
    // Webhooks are configured once the wallets exist: their own creation webhooks are not the point.
    const watcher = await createOrganization(t, 'thousand');
    const addresses = Array.from({ length: 1000 }, randomAddress);
    const wallets: string[] = [];
    for (let i = 0; i < addresses.length; i += 25) {
      wallets.push(...(await Promise.all(addresses.slice(i, i + 25).map((a, k) => walletAt(t, watcher, a, `w${i + k}`)))));
    }
    await configureWebhooks(t, watcher, { url: receiver.url, sharedSecret: SECRET });
    const nft = await chain.deployErc721();
    for (let i = 0; i < addresses.length; i += 250) {
      await chain.write(nft, ERC721_ABI, 'mintMany', [addresses.slice(i, i + 250), BigInt(i)]);
    }
    await waitApplied(t, chain);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(watcher.id)).length === 1000, 60_000);
    const [rows] = await sql<{ n: string; wallets: string }>(
      t,
      `select count(*)::text as n, count(distinct "to_wallet_id")::text as wallets from "nft_transaction"
        where "organization_id" = ? and "type" = 'nftMint' and "status" = 'confirmed'`,
      [watcher.id],
    );
    expect(rows).toEqual({ n: '1000', wallets: '1000' });
    for (const i of [0, 499, 999]) {
      expect(Object.values(await balances(t, watcher, wallets[i]))).toEqual(['1']);
    }
  }, 120_000);

  it('hides chain NFTs of contracts off the whitelist, like any other token', async () => {
    const listed = await chain.deployErc721();
    const unlisted = await chain.deployErc721();
    const holder = await walletAt(t, org, chain.accounts[5], 'whitelisted holder');
    const path = '/api/organization/v1/current-organization/nft-whitelist';
    await t
      .http()
      .post(`${path}/contracts`)
      .set(bearer(org.adminKey))
      .send({ contractAddresses: [listed] })
      .expect(200);
    await t.http().patch(path).set(bearer(org.adminKey)).send({ enabled: true }).expect(200);
    await chain.write(listed, ERC721_ABI, 'mint', [chain.accounts[5], 1n]);
    await chain.write(unlisted, ERC721_ABI, 'mint', [chain.accounts[5], 1n]);
    await waitApplied(t, chain);
    const [{ n }] = await sql<{ n: string }>(t, `select count(*)::text as n from "nft_transaction" where "to_wallet_id" = ?`, [holder]);
    expect(n).toBe('2');
    const res = await t.http().get(`/v2/wallets/${holder}/nft-balances`).set(bearer(org.adminKey)).expect(200);
    expect(res.body.nftTokenBalances.map((b: { token: { contractAddress: string } }) => b.token.contractAddress)).toEqual([
      getAddress(listed),
    ]);
    await t.http().patch(path).set(bearer(org.adminKey)).send({ enabled: false }).expect(200);
  });
});

// POST /v1/wallets/{walletId}/sync replays a wallet's history from before the follower's start.
describe('Following a chain: wallet sync', () => {
  let chain: LocalChain;
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;
  let alice: `0x${string}`, bob: `0x${string}`;
  let aliceWallet: string;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31411 });
    [, alice, bob] = chain.accounts;
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  it('validates the body and the wallet with problem details, changes nothing when it refuses, and answers a repeated request with the same replay', async () => {
    // An API process: it knows the chain but does not follow it (the next test's follower starts later).
    t = await startFollowing(chain, { ROLE: 'api' });
    org = await watchingOrganization(t, receiver);
    const wallet = await walletAt(t, org, alice, 'alice');
    aliceWallet = wallet;
    const sync = (body: unknown, walletId = wallet, key = org.adminKey) =>
      t
        .http()
        .post(`/v1/wallets/${walletId}/sync`)
        .set(bearer(key))
        .send(body as object);
    for (const body of [
      {},
      { chainId: '31411', fromBlock: 0 },
      { chainId: 31411, fromBlock: '0' },
      { chainId: 31411.5, fromBlock: 0 },
      { chainId: 31411, fromBlock: -1 },
      { chainId: 31411, fromBlock: 1.5 },
      { chainId: 0, fromBlock: 0 },
      { chainId: 31411, fromBlock: 0, extra: true },
      { chainId: 31411, fromBlock: 2 ** 60 },
    ]) {
      expectProblem(await sync(body), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await sync({ chainId: 1, fromBlock: 0 }), 422, 'UNKNOWN_CHAIN');
    const noAddress = (await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'no address' }).expect(201)).body.id;
    expectProblem(await sync({ chainId: 31411, fromBlock: 0 }, noAddress), 422, 'WALLET_HAS_NO_ADDRESS');
    expectProblem(await sync({ chainId: 31411, fromBlock: 0 }, '01930000-0000-7000-8000-000000000000'), 404, 'WALLET_NOT_FOUND');
    const reader = await createApiKey(t, org.id, ['read']);
    expectProblem(await sync({ chainId: 31411, fromBlock: 0 }, wallet, reader.key), 403, 'FORBIDDEN');
    const [{ n }] = await sql<{ n: string }>(t, `select count(*)::text as n from "wallet_sync" where "organization_id" = ?`, [org.id]);
    expect(n).toBe('0');

    // Accepted twice while it waits (this process follows nothing, so it stays open): one replay.
    const [first, second] = await Promise.all([sync({ chainId: 31411, fromBlock: 0 }), sync({ chainId: 31411, fromBlock: 0 })]);
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(first.body).toEqual({
      id: expect.any(String),
      walletId: wallet,
      chainId: 31411,
      fromBlock: 0,
      toBlock: null,
      status: 'pending',
      recordedTransactions: 0,
      createdAtUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
    });
    expect(second.body).toEqual(first.body);
    await t.close();
  });

  it('records the history before the start block once: 202, in the background, idempotent', async () => {
    // History the follower never sees: it starts at the head of its first start.
    const nft = await chain.deployErc721();
    const historyStart = await chain.blockNumber();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 1n]);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 2n]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, bob, 1n], alice);
    await chain.mine(5);
    const start = await chain.blockNumber();
    t = await startFollowing(chain, { CHAIN_START_BLOCK: undefined });
    const applied = await waitApplied(t, chain, start);
    // After the start: the follower records it (a transfer out of a token it never saw arrive is not a debit).
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, bob, 2n], alice);
    await waitApplied(t, chain);
    expect(applied.appliedBlock).toBeGreaterThanOrEqual(start);
    // The previous test's replay (from block 0) runs now that a follower does; a wallet has one
    // open sync per chain, so another start block is asked for once it has ended.
    await waitUntil(
      () => sql<{ status: string }>(t, `select "status" from "wallet_sync" where "wallet_id" = ?`, [aliceWallet]),
      (rows) => rows.every((r) => r.status === 'done'),
      30_000,
    );

    const first = await t
      .http()
      .post(`/v1/wallets/${aliceWallet}/sync`)
      .set(bearer(org.adminKey))
      .send({ chainId: 31411, fromBlock: historyStart })
      .expect(202);
    expect(first.body).toMatchObject({
      walletId: aliceWallet,
      chainId: 31411,
      fromBlock: historyStart,
      status: expect.stringMatching(/pending|running|done/),
    });
    const again = await t
      .http()
      .post(`/v1/wallets/${aliceWallet}/sync`)
      .set(bearer(org.adminKey))
      .send({ chainId: 31411, fromBlock: historyStart });
    expect(again.status).toBe(202);
    await waitUntil(
      () => sql<{ status: string }>(t, `select "status" from "wallet_sync" where "wallet_id" = ?`, [aliceWallet]),
      (rows) => rows.length > 0 && rows.every((r) => r.status === 'done'),
      30_000,
    );
    // A third request after the first finished replays again and records nothing new.
    await t
      .http()
      .post(`/v1/wallets/${aliceWallet}/sync`)
      .set(bearer(org.adminKey))
      .send({ chainId: 31411, fromBlock: historyStart })
      .expect(202);
    await waitUntil(
      () => sql<{ status: string }>(t, `select "status" from "wallet_sync" where "wallet_id" = ?`, [aliceWallet]),
      (rows) => rows.every((r) => r.status === 'done'),
      30_000,
    );

    const rows = await sql<{ type: string }>(
      t,
      `select "type" from "nft_transaction" where ("to_wallet_id" = ? or "from_wallet_id" = ?) and "status" = 'confirmed'
        order by "block_number", "log_index"`,
      [aliceWallet, aliceWallet],
    );
    expect(rows.map((r) => r.type)).toEqual(['nftMint', 'nftMint', 'nftWithdrawal', 'nftWithdrawal']);
    expect(await balances(t, org, aliceWallet)).toEqual({});
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length >= 4);
    const recorded = await transactionsFromWebhooks(t, org, receiver);
    expect(recorded.filter((x) => x.fromWalletId === aliceWallet || x.toWalletId === aliceWallet)).toHaveLength(4);
  });
});
