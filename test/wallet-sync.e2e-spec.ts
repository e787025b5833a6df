import { privateKeyToAddress, generatePrivateKey } from 'viem/accounts';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ERC721_ABI, LocalChain } from './support/evm';
import { balances, isTransactionEvent, startFollowing, waitApplied, walletAt, watchingOrganization } from './support/chain-fixture';
import { sql } from './support/nft';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { upgradeDatabase } from './support/isolated-database';
import { TestApp, testEnv } from './support/test-app';

/**
 * POST /v1/wallets/{walletId}/sync stays inside the organization that asks, and is bounded and
 * fair (SECURITY.md): one open sync per wallet and chain, five open per organization, and the open
 * syncs of all organizations take turns on a chain.
 */
const BEFORE_ONE_OPEN_SYNC = 'Migration20261126070000IndexOnlyReads';
const randomAddress = () => privateKeyToAddress(generatePrivateKey()).toLowerCase();

const sync = (t: TestApp, org: TestOrganization, walletId: string, body: { chainId: number; fromBlock: number }) =>
  t.http().post(`/v1/wallets/${walletId}/sync`).set(bearer(org.adminKey)).send(body);

async function openSyncs(t: TestApp, org: TestOrganization): Promise<number> {
  const [{ n }] = await sql<{ n: string }>(
    t,
    `select count(*)::text as n from "wallet_sync" where "organization_id" = ? and "status" in ('pending', 'running')`,
    [org.id],
  );
  return Number(n);
}

const webhooksOf = (receiver: TestReceiver, org: TestOrganization, resourceType: string): ReceivedWebhook[] =>
  receiver.received.filter((w) => w.body.organizationId === org.id && w.body.resourceType === resourceType);

describe('Wallet sync requests: one open per wallet and chain, five per organization', () => {
  const chainId = 31462;
  let chain: LocalChain;
  let t: TestApp;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId });
    // An API process: it knows the chain but follows nothing, so every sync it accepts stays open.
    t = await startFollowing(chain, { ROLE: 'api' });
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  it('answers the same request with the open sync, another fromBlock with 409, and a sixth open sync with 422', async () => {
    const org = await createOrganization(t, 'sync requests');
    const wallets: string[] = [];
    for (let i = 0; i < 6; i++) wallets.push(await walletAt(t, org, randomAddress(), `w${i}`));

    const first = await sync(t, org, wallets[0], { chainId, fromBlock: 0 });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ walletId: wallets[0], chainId, fromBlock: 0, status: 'pending' });
    const again = await sync(t, org, wallets[0], { chainId, fromBlock: 0 });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);

    const other = await sync(t, org, wallets[0], { chainId, fromBlock: 1 });
    expectProblem(other, 409, 'SYNC_IN_PROGRESS');
    expect(await openSyncs(t, org)).toBe(1);

    for (const walletId of wallets.slice(1, 5)) expect((await sync(t, org, walletId, { chainId, fromBlock: 0 })).status).toBe(202);
    expect(await openSyncs(t, org)).toBe(5);
    const sixth = await sync(t, org, wallets[5], { chainId, fromBlock: 0 });
    expectProblem(sixth, 422, 'SYNC_LIMIT_REACHED');
    expect(await openSyncs(t, org)).toBe(5);

    // At the limit, a repeated request still answers its open sync, and another fromBlock is still a 409.
    const repeated = await sync(t, org, wallets[3], { chainId, fromBlock: 0 });
    expect(repeated.status).toBe(202);
    expectProblem(await sync(t, org, wallets[3], { chainId, fromBlock: 5 }), 409, 'SYNC_IN_PROGRESS');
    expect(await openSyncs(t, org)).toBe(5);

    // Another organization has limits of its own.
    const neighbour = await createOrganization(t, 'sync neighbour');
    const theirs = await walletAt(t, neighbour, randomAddress());
    expect((await sync(t, neighbour, theirs, { chainId, fromBlock: 0 })).status).toBe(202);
  });

  it('never opens a sixth sync under concurrent requests', async () => {
    const org = await createOrganization(t, 'sync burst');
    const wallets = await Promise.all(Array.from({ length: 12 }, (_, i) => walletAt(t, org, randomAddress(), `w${i}`)));
    const answers = await Promise.all(wallets.map((walletId) => sync(t, org, walletId, { chainId, fromBlock: 0 })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(5).fill(202), ...Array(7).fill(422)]);
    for (const refused of answers.filter((a) => a.status === 422)) expectProblem(refused, 422, 'SYNC_LIMIT_REACHED');
    expect(await openSyncs(t, org)).toBe(5);
  });
});

describe('Wallet sync stays inside the organization that asks', () => {
  const chainId = 31460;
  let chain: LocalChain;
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId });
    receiver = await new TestReceiver().start();
    // The follower starts at the head: what is minted before a wallet exists only a sync records.
    t = await startFollowing(chain, { CHAIN_START_BLOCK: undefined });
    await waitApplied(t, chain);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  it("records B's sync for B alone: A's wallet at the same address gains no balance, transaction or webhook; live mints reach both", async () => {
    const x = randomAddress();
    const nft = await chain.deployErc721();
    const historyStart = await chain.blockNumber();
    // Two mints to X before anyone watches it.
    await chain.write(nft, ERC721_ABI, 'mint', [x, 1n]);
    await chain.write(nft, ERC721_ABI, 'mint', [x, 2n]);
    await waitApplied(t, chain);

    const a = await watchingOrganization(t, receiver, 'A');
    const b = await watchingOrganization(t, receiver, 'B');
    const aWallet = await walletAt(t, a, x, 'A at X');
    const bWallet = await walletAt(t, b, x, 'B at X');

    const accepted = await sync(t, b, bWallet, { chainId, fromBlock: historyStart });
    expect(accepted.status).toBe(202);
    await waitUntil(
      () => balances(t, b, bWallet),
      (held) => Object.keys(held).length === 2,
      30_000,
    );
    await waitUntil(
      () => sql<{ status: string }>(t, `select "status" from "wallet_sync" where "id" = ?`, [accepted.body.id]),
      ([row]) => row?.status === 'done',
      30_000,
    );

    // A mint after both wallets exist: the follower records it for every organization watching X.
    await chain.write(nft, ERC721_ABI, 'mint', [x, 3n]);
    const live = await chain.blockNumber();
    await waitApplied(t, chain, live);
    // Once A's webhook of the live mint is in, anything the sync had sent A would be in too (same outbox, earlier).
    await receiver.waitFor((r) => r.filter(isTransactionEvent(a.id)).length >= 1 && r.filter(isTransactionEvent(b.id)).length >= 3, 30_000);

    const rowsOf = (walletId: string) =>
      sql<{ type: string; block: string }>(
        t,
        `select "type", "block_number"::text as "block" from "nft_transaction" where "to_wallet_id" = ? and "status" = 'confirmed'
          order by "block_number"`,
        [walletId],
      );
    // A: only the live mint.
    expect(await rowsOf(aWallet)).toEqual([{ type: 'nftMint', block: String(live) }]);
    expect(Object.values(await balances(t, a, aWallet))).toEqual(['1']);
    expect(webhooksOf(receiver, a, 'Transaction')).toHaveLength(1);
    expect(webhooksOf(receiver, a, 'Token').filter((w) => w.body.action === 'create')).toHaveLength(1);
    // B: the two mints of its sync and the live one.
    expect((await rowsOf(bWallet)).map((r) => r.type)).toEqual(['nftMint', 'nftMint', 'nftMint']);
    expect(Object.values(await balances(t, b, bWallet))).toEqual(['1', '1', '1']);
    expect(webhooksOf(receiver, b, 'Transaction')).toHaveLength(3);
  });
});

describe('Wallet syncs take turns across organizations', () => {
  const chainId = 31461;
  let chain: LocalChain;
  let t: TestApp;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId });
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  it("completes one organization's short sync within 15 s while another's five long syncs are open", async () => {
    // A long, empty history, read one block at a time: each of A's syncs takes thousands of ranges.
    // (anvil mines a few hundred blocks at once far faster than thousands.)
    for (let i = 0; i < 20; i++) await chain.mine(100);
    const nft = await chain.deployErc721();
    const bAddress = randomAddress();
    await chain.write(nft, ERC721_ABI, 'mint', [bAddress, 1n]);
    const minted = await chain.blockNumber();
    t = await startFollowing(chain, { CHAIN_START_BLOCK: undefined, CHAIN_MAX_BLOCK_RANGE: '1' });
    await waitApplied(t, chain, minted);

    const a = await createOrganization(t, 'five long syncs');
    const b = await createOrganization(t, 'one short sync');
    const aWallets = await Promise.all(Array.from({ length: 5 }, (_, i) => walletAt(t, a, randomAddress(), `a${i}`)));
    const bWallet = await walletAt(t, b, bAddress, 'b');
    for (const walletId of aWallets) expect((await sync(t, a, walletId, { chainId, fromBlock: 0 })).status).toBe(202);
    expect((await sync(t, b, bWallet, { chainId, fromBlock: minted - 5 })).status).toBe(202);

    await waitUntil(
      () => balances(t, b, bWallet),
      (held) => Object.values(held).join() === '1',
      15_000,
    );
    // A's syncs were still open all along: B did not just come after them.
    expect(await openSyncs(t, a)).toBe(5);
  }, 120_000);
});

/**
 * An installation upgraded to one open sync per wallet and chain: where a wallet had several open
 * on one chain, the oldest stays open and the others end as failed, saying why.
 */
describe('one open wallet sync per wallet and chain: migration', () => {
  const database = upgradeDatabase('walletsyncmig', testEnv());
  afterAll(() => database.drop());

  it('keeps the oldest open sync of each wallet and chain, ends the others, and refuses a second open one from then on', async () => {
    const orm = await database.open();
    const organization = '01930000-0000-7000-8000-0000000000a1';
    const wallet = '01930000-0000-7000-8000-0000000000b1';
    const ids = ['01930000-0000-7000-8000-0000000000e1', '01930000-0000-7000-8000-0000000000e2', '01930000-0000-7000-8000-0000000000e3'];
    const otherChain = '01930000-0000-7000-8000-0000000000e4';
    const finished = '01930000-0000-7000-8000-0000000000e5';
    try {
      await orm.getMigrator().up({ to: BEFORE_ONE_OPEN_SYNC });
      const conn = orm.em.getConnection();
      await conn.execute(`insert into "organization" ("id", "created_at", "name") values (?, now(), 'upgraded')`, [organization]);
      await conn.execute(`insert into "wallet" ("id", "created_at", "organization_id", "address") values (?, now(), ?, ?)`, [
        wallet,
        organization,
        randomAddress(),
      ]);
      const insert = (id: string, chainId: number, fromBlock: number, status: string, createdAt: string) =>
        conn.execute(
          `insert into "wallet_sync" ("id", "organization_id", "wallet_id", "chain_id", "address", "from_block", "next_block", "status", "created_at")
           values (?, ?, ?, ?, '0x00000000000000000000000000000000000000aa', ?, ?, ?, ?)`,
          [id, organization, wallet, chainId, fromBlock, fromBlock, status, createdAt],
        );
      await insert(ids[1], 1, 200, 'running', '2026-11-01T10:00:01Z');
      await insert(ids[0], 1, 100, 'pending', '2026-11-01T10:00:00Z');
      await insert(ids[2], 1, 300, 'pending', '2026-11-01T10:00:02Z');
      await insert(otherChain, 2, 100, 'pending', '2026-11-01T10:00:03Z');
      await insert(finished, 1, 50, 'done', '2026-10-01T10:00:00Z');
      await orm.getMigrator().up();

      const rows = await conn.execute<{ id: string; status: string; last_error: string | null }[]>(
        `select "id", "status", "last_error" from "wallet_sync" order by "id"`,
      );
      expect(rows).toEqual([
        { id: ids[0], status: 'pending', last_error: null },
        { id: ids[1], status: 'failed', last_error: expect.stringContaining('one open sync per chain') },
        { id: ids[2], status: 'failed', last_error: expect.stringContaining('one open sync per chain') },
        { id: otherChain, status: 'pending', last_error: null },
        { id: finished, status: 'done', last_error: null },
      ]);
      await expect(insert('01930000-0000-7000-8000-0000000000e6', 1, 400, 'pending', '2026-11-02T10:00:00Z')).rejects.toThrow(
        /wallet_sync_open_index/,
      );
    } finally {
      await orm.close(true);
    }
  });
});
