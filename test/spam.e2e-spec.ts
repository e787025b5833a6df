import { bearer, createApiKey, expectProblem, TestOrganization } from './support/factories';
import { ERC721_ABI, LocalChain } from './support/evm';
import { SECRET, startFollowing, waitApplied, walletAt, watchingOrganization } from './support/chain-fixture';
import { checksum, sql } from './support/nft';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { signatureIsValid } from './support/webhooks';
import { TestApp } from './support/test-app';

const OVERRIDES = '/api/organization/v1/current-organization/spam-overrides';
const NOT_SPAM = { isSpam: false, reasons: [], source: 'rules' };
const AIRDROP = { isSpam: true, reasons: ['massAirdrop'], source: 'rules' };

describe('Spam: rules, overrides and the webhooks of a change', () => {
  let chain: LocalChain;
  let t: TestApp;
  let receiver: TestReceiver;
  let orgA: TestOrganization, orgB: TestOrganization;
  let alice: `0x${string}`;
  let walletA: string, walletB: string;
  const outsiders = Array.from({ length: 60 }, (_, i) => `0x${(0x5000 + i).toString(16).padStart(40, '0')}`);

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31603 });
    alice = chain.accounts[1];
    receiver = await new TestReceiver().start();
    t = await startFollowing(chain);
    orgA = await watchingOrganization(t, receiver, 'Spam A');
    orgB = await watchingOrganization(t, receiver, 'Spam B');
    walletA = await walletAt(t, orgA, alice, 'alice');
    walletB = await walletAt(t, orgB, alice, 'alice');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  const tokensOf = async (org: TestOrganization, walletId: string, query: Record<string, string> = {}) => {
    const res = await t.http().get(`/v2/wallets/${walletId}/nft-balances`).query(query).set(bearer(org.adminKey)).expect(200);
    return res.body.nftTokenBalances.map((b: { token: { id: string; contractAddress: string; spam: unknown } }) => b.token) as {
      id: string;
      contractAddress: string;
      spam: unknown;
    }[];
  };
  const tokenOf = async (org: TestOrganization, walletId: string, contract: string) => {
    const tokens = await waitUntil(
      () => tokensOf(org, walletId),
      (list) => list.some((x) => x.contractAddress.toLowerCase() === contract.toLowerCase()),
    );
    return tokens.find((x) => x.contractAddress.toLowerCase() === contract.toLowerCase())!;
  };
  const spamOf = async (org: TestOrganization, tokenId: string) =>
    (await t.http().get(`/v1/tokens/${tokenId}`).set(bearer(org.adminKey)).expect(200)).body.spam;
  const judged = (contract: string) =>
    waitUntil(
      () =>
        sql(t, `select 1 from "spam_contract" where "chain_id" = ? and "contract_address" = ?`, [chain.chainId, contract.toLowerCase()]),
      (rows) => rows.length === 1,
      30_000,
    );
  const spamUpdates = (org: TestOrganization, tokenId: string) => (r: ReceivedWebhook) =>
    r.body.organizationId === org.id &&
    r.body.resourceType === 'Token' &&
    r.body.action === 'update' &&
    r.body.resourceId === tokenId &&
    (r.body.changes as Record<string, unknown> | null)?.spam !== undefined;

  let airdropped: string;

  it('judges a 50-recipient airdrop massAirdrop for every organization, with one nft update webhook per token', async () => {
    const nft = await chain.deployErc721({ name: 'Free Drop', symbol: 'FREE' });
    airdropped = checksum(nft);
    // A first, ordinary mint: the contract's first classification (not spam) tells no one.
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 1n]);
    await waitApplied(t, chain);
    const tokenA = await tokenOf(orgA, walletA, nft);
    const tokenB = await tokenOf(orgB, walletB, nft);
    await judged(nft);
    expect(await spamOf(orgA, tokenA.id)).toEqual(NOT_SPAM);

    // 49 outsiders, alice, the sender (account 0) and the zero address are not counted twice or at all: 50 recipients.
    await chain.write(nft, ERC721_ABI, 'mintMany', [[...outsiders.slice(0, 49), alice, chain.accounts[0]], 100n]);
    await waitApplied(t, chain);
    await waitUntil(
      () => spamOf(orgA, tokenA.id),
      (spam) => (spam as { isSpam: boolean }).isSpam,
      30_000,
    );
    expect(await spamOf(orgA, tokenA.id)).toEqual(AIRDROP);
    expect(await spamOf(orgB, tokenB.id)).toEqual(AIRDROP);
    // Every token of the contract shows it, in nft-balances too.
    const held = (await tokensOf(orgA, walletA)).filter((x) => x.contractAddress.toLowerCase() === nft.toLowerCase());
    expect(held).toHaveLength(2);
    for (const token of held) expect(token.spam).toEqual(AIRDROP);

    // The token held before the airdrop changed: its organizations are told, once each, signed as every webhook.
    const [toA] = await receiver.waitFor((r) => r.filter(spamUpdates(orgA, tokenA.id)).length === 1, 15_000);
    void toA;
    await receiver.waitFor((r) => r.filter(spamUpdates(orgB, tokenB.id)).length === 1, 15_000);
    const webhook = receiver.received.find(spamUpdates(orgA, tokenA.id))!;
    expect(webhook.body.changes).toEqual({ spam: AIRDROP });
    expect(webhook.body.webhookType ?? 'nft').toBe('nft');
    expect(signatureIsValid(webhook, SECRET)).toBe(true);
  });

  it('does not fire under 50 recipients', async () => {
    const nft = await chain.deployErc721();
    await chain.write(nft, ERC721_ABI, 'mintMany', [[...outsiders.slice(0, 48), alice], 1n]);
    await waitApplied(t, chain);
    const token = await tokenOf(orgA, walletA, nft);
    await judged(nft);
    expect(await spamOf(orgA, token.id)).toEqual(NOT_SPAM);
  });

  it('judges lure metadata (a URL and a lure word in name and description) lureMetadata', async () => {
    const nft = await chain.deployErc721();
    const document = { name: 'Claim your reward', description: 'Go to gift-drop.xyz before it ends' };
    await chain.write(nft, ERC721_ABI, 'setTokenURI', [
      7n,
      `data:application/json;base64,${Buffer.from(JSON.stringify(document)).toString('base64')}`,
    ]);
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 7n]);
    await waitApplied(t, chain);
    const token = await tokenOf(orgA, walletA, nft);
    const spam = await waitUntil(
      () => spamOf(orgA, token.id),
      (value) => (value as { isSpam: boolean }).isSpam,
      30_000,
    );
    expect(spam).toEqual({ isSpam: true, reasons: ['lureMetadata'], source: 'rules' });
  });

  it('filters nft-balances, transfers and collections with spam=include|exclude|only', async () => {
    const all = await tokensOf(orgA, walletA);
    const spammy = all.filter((x) => (x.spam as { isSpam: boolean }).isSpam).map((x) => x.id);
    const clean = all.filter((x) => !(x.spam as { isSpam: boolean }).isSpam).map((x) => x.id);
    expect(spammy.length).toBeGreaterThan(0);
    expect(clean.length).toBeGreaterThan(0);
    expect((await tokensOf(orgA, walletA, { spam: 'include' })).map((x) => x.id)).toEqual(all.map((x) => x.id));
    expect((await tokensOf(orgA, walletA, { spam: 'exclude' })).map((x) => x.id)).toEqual(clean);
    expect((await tokensOf(orgA, walletA, { spam: 'only' })).map((x) => x.id)).toEqual(spammy);

    const transfers = async (spam: string) =>
      (await t.http().get(`/v1/wallets/${walletA}/transfers`).query({ spam }).set(bearer(orgA.adminKey)).expect(200)).body.transfers.map(
        (x: { tokenId: string }) => x.tokenId,
      ) as string[];
    expect(new Set(await transfers('only'))).toEqual(new Set(spammy));
    expect(new Set(await transfers('exclude'))).toEqual(new Set(clean));

    const collections = async (spam: string) =>
      (await t.http().get(`/v1/wallets/${walletA}/collections`).query({ spam }).set(bearer(orgA.adminKey)).expect(200)).body
        .collections as { contractAddress: string; spam: { isSpam: boolean } }[];
    const only = await collections('only');
    expect(only.length).toBeGreaterThan(0);
    expect(only.every((c) => c.spam.isSpam)).toBe(true);
    expect((await collections('exclude')).every((c) => !c.spam.isSpam)).toBe(true);
    expect(only.map((c) => c.contractAddress)).toContain(
      (await collections('include')).find((c) => c.contractAddress.toLowerCase() === airdropped.toLowerCase())!.contractAddress,
    );

    for (const path of [`/v2/wallets/${walletA}/nft-balances`, `/v1/wallets/${walletA}/transfers`, `/v1/wallets/${walletA}/collections`]) {
      const res = await t.http().get(path).query({ spam: 'sometimes' }).set(bearer(orgA.adminKey));
      expectProblem(res, 400, 'VALIDATION_FAILED');
    }
  });

  it('an override decides for its organization alone, tells only it, and the rules decide again once it is removed', async () => {
    const tokenA = await tokenOf(orgA, walletA, airdropped);
    const tokenB = await tokenOf(orgB, walletB, airdropped);
    const before = receiver.received.filter(spamUpdates(orgA, tokenA.id)).length;
    const beforeB = receiver.received.filter(spamUpdates(orgB, tokenB.id)).length;

    const put = await t
      .http()
      .put(`${OVERRIDES}/${chain.chainId}/${airdropped.toLowerCase()}`)
      .set(bearer(orgA.adminKey))
      .send({ isSpam: false })
      .expect(200);
    expect(put.body).toEqual({ chainId: chain.chainId, contractAddress: airdropped, isSpam: false });
    const overridden = { isSpam: false, reasons: ['massAirdrop'], source: 'organization' };
    expect(await spamOf(orgA, tokenA.id)).toEqual(overridden);
    expect(await spamOf(orgB, tokenB.id)).toEqual(AIRDROP);
    const listed = await t.http().get(OVERRIDES).set(bearer(orgA.adminKey)).expect(200);
    expect(listed.body).toEqual({
      spamOverrides: [{ chainId: chain.chainId, contractAddress: airdropped, isSpam: false }],
      nextPageKey: null,
    });
    expect((await t.http().get(OVERRIDES).set(bearer(orgB.adminKey)).expect(200)).body.spamOverrides).toEqual([]);

    await receiver.waitFor((r) => r.filter(spamUpdates(orgA, tokenA.id)).length === before + 1, 15_000);
    expect(receiver.received.filter(spamUpdates(orgA, tokenA.id)).at(-1)!.body.changes).toEqual({ spam: overridden });

    // The same verdict again changes nothing and tells no one.
    await t.http().put(`${OVERRIDES}/${chain.chainId}/${airdropped}`).set(bearer(orgA.adminKey)).send({ isSpam: false }).expect(200);
    await t.http().delete(`${OVERRIDES}/${chain.chainId}/${airdropped}`).set(bearer(orgA.adminKey)).expect(204);
    expect(await spamOf(orgA, tokenA.id)).toEqual(AIRDROP);
    await receiver.waitFor((r) => r.filter(spamUpdates(orgA, tokenA.id)).length === before + 2, 15_000);
    expect(receiver.received.filter(spamUpdates(orgA, tokenA.id)).at(-1)!.body.changes).toEqual({ spam: AIRDROP });
    expect(receiver.received.filter(spamUpdates(orgB, tokenB.id))).toHaveLength(beforeB);

    expectProblem(
      await t.http().delete(`${OVERRIDES}/${chain.chainId}/${airdropped}`).set(bearer(orgA.adminKey)),
      404,
      'SPAM_OVERRIDE_NOT_FOUND',
    );
  });

  it('overrides any contract of a followed chain, seen or not', async () => {
    const unseen = `0x${'ab'.repeat(20)}`;
    await t.http().put(`${OVERRIDES}/${chain.chainId}/${unseen}`).set(bearer(orgB.adminKey)).send({ isSpam: true }).expect(200);
    await t
      .http()
      .delete(`${OVERRIDES}/${chain.chainId}/${unseen.toUpperCase().replace('0X', '0x')}`)
      .set(bearer(orgB.adminKey))
      .expect(204);
  });

  it('answers 400, 403 and 422 for what it cannot take, and changes nothing', async () => {
    const path = (chainId: string | number, address = airdropped) => `${OVERRIDES}/${chainId}/${address}`;
    const put = (url: string, body: unknown, key = orgA.adminKey) =>
      t
        .http()
        .put(url)
        .set(bearer(key))
        .send(body as object);
    expectProblem(await put(path('abc'), { isSpam: true }), 400, 'VALIDATION_FAILED');
    expectProblem(await put(path('1.5'), { isSpam: true }), 400, 'VALIDATION_FAILED');
    expectProblem(await put(path(chain.chainId, '0x1234'), { isSpam: true }), 400, 'INVALID_ADDRESS');
    expectProblem(await put(path(chain.chainId, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'), { isSpam: true }), 400, 'INVALID_ADDRESS');
    expectProblem(await put(path(chain.chainId), { isSpam: 'yes' }), 400, 'VALIDATION_FAILED');
    expectProblem(await put(path(chain.chainId), {}), 400, 'VALIDATION_FAILED');
    expectProblem(await put(path(chain.chainId), { isSpam: true, extra: 1 }), 400, 'VALIDATION_FAILED');
    expectProblem(await put(path(999_999), { isSpam: true }), 422, 'UNKNOWN_CHAIN');
    expectProblem(await t.http().delete(path('x')).set(bearer(orgA.adminKey)), 400, 'VALIDATION_FAILED');
    const reader = await createApiKey(t, orgA.id, ['read']);
    expectProblem(await put(path(chain.chainId), { isSpam: true }, reader.key), 403, 'FORBIDDEN');
    expectProblem(await t.http().get(OVERRIDES).set(bearer(reader.key)), 403, 'FORBIDDEN');
    expect((await t.http().get(OVERRIDES).set(bearer(orgA.adminKey)).expect(200)).body.spamOverrides).toEqual([]);
  });
});
