import { EntityManager } from '@mikro-orm/postgresql';
import { getAddress } from 'viem';
import { ChainMovement, ChainMovementsService, RecordResult } from '../src/modules/transactions/chain-movements.service';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { eventsFor, newAddress, nftApi, sql, UTC_TIMESTAMP, UUID_V7 } from './support/nft';
import { TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks } from './support/webhooks';

/**
 * The ledger side of following a chain, driven through the app's own ChainMovementsService with
 * synthetic movements (the follower's tests drive it from a real node): what each organization
 * records, exactly once, uncovered history, reverts, and what the API shows of it.
 */
// A chain of this run only: revertFrom works on a whole chain, and other suites may share the database.
const CHAIN = 900_000 + Math.floor(Math.random() * 90_000);
const ZERO = '0x0000000000000000000000000000000000000000';
const SECRET = 'chain-ledger-shared-secret-0001';
const hash = (n: number, salt: string) => `0x${salt.repeat(64).slice(0, 62)}${n.toString(16).padStart(2, '0')}`;

describe('chain movements in the ledger', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let o1: TestOrganization;
  let o2: TestOrganization;
  // A is watched by both organizations, B only by o1.
  const [A, B, OUT] = [newAddress(), newAddress(), newAddress()];
  const [K721, K1155] = [newAddress(), newAddress()];
  const wallets: Record<string, string> = {};

  const record = (movements: ChainMovement[]): Promise<RecordResult> =>
    t.app
      .get(EntityManager)
      .fork()
      .transactional((em) => t.app.get(ChainMovementsService).record(em, movements));
  const revertFrom = (fromBlock: number): Promise<number> =>
    t.app
      .get(EntityManager)
      .fork()
      .transactional((em) => t.app.get(ChainMovementsService).revertFrom(em, CHAIN, fromBlock));

  let logCounter = 0;
  const movement = (
    block: number,
    from: string,
    to: string,
    token: { contract: string; id: string; standard: 'erc721' | 'erc1155' },
    amount = '1',
    batchIndex: number | null = null,
    salt = 'a',
  ): ChainMovement => ({
    chainId: CHAIN,
    blockNumber: block,
    blockHash: hash(block, salt),
    blockTimestamp: new Date(Date.UTC(2026, 10, 1, 0, 0, block)),
    transactionHash: hash(block, 'f'),
    logIndex: batchIndex === null ? logCounter++ : 50,
    batchIndex,
    contractAddress: token.contract,
    blockchainTokenId: token.id,
    amount,
    from: from.toLowerCase(),
    to: to.toLowerCase(),
    standard: token.standard,
  });
  const nft1 = { contract: K721, id: '1', standard: 'erc721' as const };
  const f5 = { contract: K1155, id: '5', standard: 'erc1155' as const };
  const f6 = { contract: K1155, id: '6', standard: 'erc1155' as const };
  const f7 = { contract: K1155, id: '7', standard: 'erc1155' as const };
  const f9 = { contract: K1155, id: '9', standard: 'erc1155' as const };

  // Chain order: one movement of each kind, 1155 amounts and a TransferBatch, then history the
  // wallets cannot cover (their earlier movements lie before what is followed).
  const history = () => [
    movement(100, ZERO, A, nft1),
    movement(101, A, B, nft1),
    movement(102, ZERO, A, f5, '10', 0),
    movement(102, ZERO, A, f6, '3', 1),
    movement(103, A, OUT, f5, '4'),
    movement(104, OUT, B, f6, '2'),
    movement(105, B, ZERO, nft1),
    movement(106, B, A, f7, '5'),
    movement(106, B, OUT, f9, '1'),
  ];
  let chainHistory: ChainMovement[];

  /** Chain transactions of an organization, oldest first, as the ledger stores them. */
  const rows = (org: TestOrganization) =>
    sql<{
      id: string;
      type: string;
      status: string;
      from_wallet_id: string | null;
      to_wallet_id: string | null;
      amount: string;
      token_id: string;
    }>(
      t,
      `select "id", "type", "status", "from_wallet_id", "to_wallet_id", "amount"::text as "amount", "token_id"
         from "nft_transaction" where "organization_id" = ? and "source" = 'chain'
        order by "block_number", "log_index", coalesce("batch_index", -1)`,
      [org.id],
    );

  /** Every balance row of an organization equals the sum of its confirmed movements, and none is negative. */
  const expectLedgerConsistent = async (org: TestOrganization) => {
    const mismatches = await sql(
      t,
      `with moves as (
         select "to_wallet_id" as "wallet_id", "token_id", "amount" from "nft_transaction"
          where "organization_id" = ? and "status" = 'confirmed' and "to_wallet_id" is not null
         union all
         select "from_wallet_id", "token_id", -"amount" from "nft_transaction"
          where "organization_id" = ? and "status" = 'confirmed' and "from_wallet_id" is not null),
       sums as (select "wallet_id", "token_id", sum("amount") as "amount" from moves group by 1, 2)
       select coalesce(b."wallet_id", s."wallet_id") as "wallet_id", b."amount" as "balance", s."amount" as "sum"
         from (select * from "balance" where "organization_id" = ?) b
         full join sums s on s."wallet_id" = b."wallet_id" and s."token_id" = b."token_id"
        where coalesce(b."amount", 0) <> coalesce(s."amount", 0) or b."amount" < 0`,
      [org.id, org.id, org.id],
    );
    expect(mismatches).toEqual([]);
  };

  const held = async (org: TestOrganization, walletId: string) =>
    Object.fromEntries((await nftApi(t, org.adminKey).allBalances(walletId)).map((b) => [b.tokenId, b.amount] as const)) as Record<
      string,
      string
    >;
  const tokenIdOf = async (org: TestOrganization, token: { contract: string; id: string }) => {
    const [row] = await sql<{ id: string }>(
      t,
      'select "id" from "token" where "organization_id" = ? and "chain_id" = ? and "contract_address" = ? and "blockchain_token_id" = ?',
      [org.id, CHAIN, token.contract, token.id],
    );
    return row?.id;
  };

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await new TestReceiver().start();
    o1 = await createOrganization(t);
    o2 = await createOrganization(t);
    for (const org of [o1, o2])
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, webhookTypes: ['transaction', 'nft'] });
    const wallet = async (org: TestOrganization, address: string) =>
      (
        await t
          .http()
          .post('/v1/wallets')
          .set(bearer(org.adminKey))
          .send({ address: getAddress(address) })
          .expect(201)
      ).body.id as string;
    wallets.o1A = await wallet(o1, A);
    wallets.o1B = await wallet(o1, B);
    wallets.o2A = await wallet(o2, A);
    chainHistory = history();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  it('records each movement as every organization holding one of its addresses sees it', async () => {
    const result = await record(chainHistory);
    // o1: all but the uncovered B -> OUT; o2: A's side of each movement touching A.
    expect(result).toEqual({ recorded: 14, skipped: 1, newTokenIds: expect.any(Array) });
    // Each organization has its own copy of each token it saw: 4 each (f9 was never recorded).
    expect(result.newTokenIds).toHaveLength(8);

    const n1 = await tokenIdOf(o1, nft1);
    const [t5, t6, t7] = [await tokenIdOf(o1, f5), await tokenIdOf(o1, f6), await tokenIdOf(o1, f7)];
    expect((await rows(o1)).map((r) => [r.type, r.from_wallet_id, r.to_wallet_id, r.token_id, r.amount])).toEqual([
      ['nftMint', null, wallets.o1A, n1, '1'],
      ['nftTransfer', wallets.o1A, wallets.o1B, n1, '1'],
      ['nftMint', null, wallets.o1A, t5, '10'],
      ['nftMint', null, wallets.o1A, t6, '3'],
      ['nftWithdrawal', wallets.o1A, null, t5, '4'],
      ['nftDeposit', null, wallets.o1B, t6, '2'],
      ['nftBurn', wallets.o1B, null, n1, '1'],
      // B never held f7 here (its history is older than what is followed): a deposit to A.
      ['nftDeposit', null, wallets.o1A, t7, '5'],
    ]);
    // B -> OUT of f9 is a withdrawal B cannot cover: nothing recorded, no token created.
    expect(await tokenIdOf(o1, f9)).toBeUndefined();

    const m1 = await tokenIdOf(o2, nft1);
    const [u5, u6, u7] = [await tokenIdOf(o2, f5), await tokenIdOf(o2, f6), await tokenIdOf(o2, f7)];
    expect(new Set([m1, u5, u6, u7]).size).toBe(4);
    expect([m1, u5, u6, u7]).not.toContain(n1);
    expect((await rows(o2)).map((r) => [r.type, r.from_wallet_id, r.to_wallet_id, r.token_id, r.amount])).toEqual([
      ['nftMint', null, wallets.o2A, m1, '1'],
      ['nftWithdrawal', wallets.o2A, null, m1, '1'],
      ['nftMint', null, wallets.o2A, u5, '10'],
      ['nftMint', null, wallets.o2A, u6, '3'],
      ['nftWithdrawal', wallets.o2A, null, u5, '4'],
      ['nftDeposit', null, wallets.o2A, u7, '5'],
    ]);

    expect(await held(o1, wallets.o1A)).toEqual({ [t5]: '6', [t6]: '3', [t7]: '5' });
    expect(await held(o1, wallets.o1B)).toEqual({ [t6]: '2' });
    expect(await held(o2, wallets.o2A)).toEqual({ [u5]: '6', [u6]: '3', [u7]: '5' });
    await expectLedgerConsistent(o1);
    await expectLedgerConsistent(o2);
  });

  it('sends the transaction and nft create webhooks of each organization to its receiver', async () => {
    const o1Rows = await rows(o1);
    const o2Rows = await rows(o2);
    await receiver.waitFor((r) => r.filter((w) => w.body.resourceType === 'Transaction').length >= o1Rows.length + o2Rows.length);
    await receiver.waitFor((r) => r.filter((w) => w.body.resourceType === 'Token').length >= 8);
    for (const [org, orgRows] of [
      [o1, o1Rows],
      [o2, o2Rows],
    ] as const) {
      const got = receiver.received.filter((w) => w.body.organizationId === org.id && w.body.resourceType === 'Transaction');
      expect(got.map((w) => w.body.resourceId).sort()).toEqual(orgRows.map((r) => r.id).sort());
      expect(got.every((w) => w.body.action === 'create' && w.body.changes === null)).toBe(true);
    }
    const tokens = receiver.received.filter((w) => w.body.resourceType === 'Token');
    expect(tokens.filter((w) => w.body.organizationId === o1.id)).toHaveLength(4);
    expect(tokens.filter((w) => w.body.organizationId === o2.id)).toHaveLength(4);
    expect(tokens.every((w) => w.body.action === 'create')).toBe(true);
  });

  it('records nothing twice: the same movements again are all skipped, with no new event', async () => {
    const [before1, before2] = [await rows(o1), await rows(o2)];
    const events = await sql<{ n: string }>(t, 'select count(*)::text as n from "domain_event" where "organization_id" in (?, ?)', [
      o1.id,
      o2.id,
    ]);
    expect(await record(history().map((m, i) => ({ ...m, logIndex: chainHistory[i].logIndex })))).toEqual({
      recorded: 0,
      skipped: 15,
      newTokenIds: [],
    });
    expect(await rows(o1)).toEqual(before1);
    expect(await rows(o2)).toEqual(before2);
    expect(await sql(t, 'select count(*)::text as n from "domain_event" where "organization_id" in (?, ?)', [o1.id, o2.id])).toEqual(
      events,
    );
  });

  it('shows chain transactions with source, status and EIP-55 chain coordinates; tokens with their chain', async () => {
    const batchItem = chainHistory[3];
    const [row] = await sql<{ id: string }>(
      t,
      `select "id" from "nft_transaction" where "organization_id" = ? and "transaction_hash" = ? and "batch_index" = 1`,
      [o1.id, batchItem.transactionHash],
    );
    const res = await t.http().get(`/v1/transactions/${row.id}`).set(bearer(o1.adminKey)).expect(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID_V7),
      organizationId: o1.id,
      type: 'nftMint',
      tokenId: await tokenIdOf(o1, f6),
      fromWalletId: null,
      toWalletId: wallets.o1A,
      amount: '3',
      source: 'chain',
      status: 'confirmed',
      chain: {
        chainId: CHAIN,
        blockNumber: 102,
        blockHash: batchItem.blockHash,
        blockTimestampUtc: '2026-11-01T00:01:42.000000+00:00',
        transactionHash: batchItem.transactionHash,
        logIndex: 50,
        batchIndex: 1,
        from: ZERO,
        to: getAddress(A),
      },
      createdAtUtc: '2026-11-01T00:01:42.000000+00:00',
    });
    expect(res.body.createdAtUtc).toMatch(UTC_TIMESTAMP);

    const withdrawal = await sql<{ id: string }>(
      t,
      `select "id" from "nft_transaction" where "organization_id" = ? and "type" = 'nftWithdrawal'`,
      [o1.id],
    );
    const w = await t.http().get(`/v1/transactions/${withdrawal[0].id}`).set(bearer(o1.adminKey)).expect(200);
    expect(w.body.chain).toEqual(expect.objectContaining({ from: getAddress(A), to: getAddress(OUT), batchIndex: null }));
    expect(w.body.toWalletId).toBeNull();

    const token = await t
      .http()
      .get(`/v1/tokens/${await tokenIdOf(o1, f6)}`)
      .set(bearer(o1.adminKey))
      .expect(200);
    expect(token.body).toEqual(
      expect.objectContaining({
        contractAddress: getAddress(K1155),
        blockchainTokenId: '6',
        chainId: CHAIN,
        metadataStatus: 'pending',
        metadataError: null,
      }),
    );
    // The other organization's copy is its own and invisible here.
    await t
      .http()
      .get(`/v1/tokens/${await tokenIdOf(o2, f6)}`)
      .set(bearer(o1.adminKey))
      .expect(404);
  });

  it('refuses API movements of chain tokens with 422 CHAIN_MANAGED, single and batch, changing nothing', async () => {
    const api = nftApi(t, o1.adminKey);
    const t6 = await tokenIdOf(o1, f6);
    const before = { a: await held(o1, wallets.o1A), b: await held(o1, wallets.o1B) };
    const events = await sql(t, 'select count(*)::text as n from "domain_event" where "organization_id" = ?', [o1.id]);

    for (const body of [
      { tokenId: t6, fromWalletId: wallets.o1A, toWalletId: wallets.o1B, amount: '1' },
      { tokenId: t6, toWalletId: wallets.o1A },
      { tokenId: t6, fromWalletId: wallets.o1B },
    ]) {
      const res = await t.http().post('/v1/transactions').set(api.auth).send(body);
      expectProblem(res, 422, 'CHAIN_MANAGED');
    }

    const apiToken = await api.token();
    const batch = await t
      .http()
      .post('/v1/transactions/batch')
      .set(api.auth)
      .send({
        transactions: [
          { tokenId: apiToken.id, toWalletId: wallets.o1A, amount: '2' },
          { tokenId: t6, fromWalletId: wallets.o1A, toWalletId: wallets.o1B },
        ],
      });
    expectProblem(batch, 422, 'CHAIN_MANAGED');
    expect(batch.body.errors).toEqual([{ index: 1, field: 'tokenId', message: expect.any(String) }]);
    expect(batch.body.detail).toMatch(/^transactions\[1\]/);

    expect({ a: await held(o1, wallets.o1A), b: await held(o1, wallets.o1B) }).toEqual(before);
    expect(await sql(t, 'select count(*)::text as n from "domain_event" where "organization_id" = ?', [o1.id])).toEqual([
      { n: String(Number((events[0] as { n: string }).n) + 1) }, // only the API token's create
    ]);
    // API tokens still move as before.
    await api.mint(apiToken.id, wallets.o1A, '2');
    await expectLedgerConsistent(o1);
  });

  it('reverts a replaced range newest first: status reverted, balances restored, update webhooks', async () => {
    const beforeRevert = await rows(o1);
    const receivedBefore = receiver.received.length;
    // Blocks 104..106 are replaced: o1 has 3 movements there, o2 one.
    expect(await revertFrom(104)).toBe(4);

    const after = await rows(o1);
    const reverted = after.filter((r) => r.status === 'reverted');
    expect(reverted.map((r) => r.type)).toEqual(['nftDeposit', 'nftBurn', 'nftDeposit']);
    expect(after.filter((r) => r.status === 'confirmed')).toEqual(beforeRevert.slice(0, 5));
    const [t5, t6] = [await tokenIdOf(o1, f5), await tokenIdOf(o1, f6)];
    const n1 = await tokenIdOf(o1, nft1);
    expect(await held(o1, wallets.o1A)).toEqual(expect.objectContaining({ [t5]: '6', [t6]: '3' }));
    expect(Object.keys(await held(o1, wallets.o1A))).not.toContain(await tokenIdOf(o1, f7));
    expect(await held(o1, wallets.o1B)).toEqual({ [n1]: '1' });
    await expectLedgerConsistent(o1);
    await expectLedgerConsistent(o2);

    // The outbox holds the updates newest first; the receiver gets each, with changes {status: reverted}.
    const newestFirst = [...reverted].reverse().map((r) => r.id);
    const updates = await sql<{ resource_id: string; changes: unknown; action: string }>(
      t,
      `select "resource_id", "changes", "action" from "domain_event" where "organization_id" = ? and "action" = 'update' order by "id"`,
      [o1.id],
    );
    expect(updates).toEqual(newestFirst.map((id) => ({ resource_id: id, changes: { status: 'reverted' }, action: 'update' })));
    await receiver.waitFor((r) => r.slice(receivedBefore).filter((w) => w.body.action === 'update').length >= 4);
    const got = receiver.received.slice(receivedBefore).filter((w) => w.body.organizationId === o1.id && w.body.action === 'update');
    expect(got.map((w) => w.body.resourceId).sort()).toEqual([...newestFirst].sort());
    for (const w of got)
      expect(w.body).toEqual(expect.objectContaining({ resourceType: 'Transaction', action: 'update', changes: { status: 'reverted' } }));

    const api = await t.http().get(`/v1/transactions/${reverted[0].id}`).set(bearer(o1.adminKey)).expect(200);
    expect(api.body).toEqual(expect.objectContaining({ status: 'reverted', source: 'chain' }));
    const o2Reverted = (await rows(o2)).filter((r) => r.status === 'reverted');
    expect(o2Reverted.map((r) => r.type)).toEqual(['nftDeposit']);
    for (const event of await eventsFor(t, o2Reverted[0].id)) expect(event.organization_id).toBe(o2.id);
  });

  it('applies the canonical blocks as new transactions after a revert, and a repeated revert changes nothing', async () => {
    // The canonical chain has the same transactions in other blocks (another hash).
    const canonical = chainHistory.slice(5).map((m) => ({ ...m, blockNumber: m.blockNumber + 10, blockHash: hash(m.blockNumber, 'c') }));
    const result = await record(canonical);
    expect(result.recorded).toBe(4);
    const o1Rows = await rows(o1);
    expect(o1Rows.filter((r) => r.status === 'confirmed')).toHaveLength(8);
    expect(o1Rows.filter((r) => r.status === 'reverted')).toHaveLength(3);
    await expectLedgerConsistent(o1);
    await expectLedgerConsistent(o2);

    expect(await revertFrom(200)).toBe(0);
    // Revert everything from the start: every balance back to zero, never below.
    expect(await revertFrom(0)).toBe(8 + 6);
    expect(await held(o1, wallets.o1A)).toEqual(expect.not.objectContaining({ [await tokenIdOf(o1, f5)]: expect.anything() }));
    const left = await sql<{ n: string }>(
      t,
      `select count(*)::text as n from "balance" b join "token" tk on tk."id" = b."token_id" where tk."chain_id" = ? and b."amount" <> 0 and b."organization_id" in (?, ?)`,
      [CHAIN, o1.id, o2.id],
    );
    expect(left).toEqual([{ n: '0' }]);
    await expectLedgerConsistent(o1);
    await expectLedgerConsistent(o2);
  });
});
