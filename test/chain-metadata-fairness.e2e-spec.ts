import { MikroORM } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Address } from 'viem';
import { TokenMetadataSyncService } from '../src/modules/tokens/token-metadata-sync.service';
import { TokensService } from '../src/modules/tokens/tokens.service';
import { startFollowing, walletAt } from './support/chain-fixture';
import { ERC721_ABI, LocalChain } from './support/evm';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { MetadataServer, Tarpit, tokenOf } from './support/metadata-server';
import { newAddress, nftApi } from './support/nft';
import { waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The token ids a wallet holds, every page read. */
async function heldTokens(t: TestApp, org: TestOrganization, walletId: string): Promise<string[]> {
  return (await nftApi(t, org.adminKey).allBalances(walletId, 100)).map((b) => b.tokenId);
}

/** Waits for the wallet's only token and then for its metadata to be fetched. */
async function firstTokenOk(t: TestApp, org: TestOrganization, walletId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const [tokenId] = await waitUntil(
    () => heldTokens(t, org, walletId),
    (ids) => ids.length === 1,
    timeoutMs,
  );
  return waitUntil(
    () => tokenOf(t, org, tokenId),
    (token) => token.metadataStatus === 'ok',
    Math.max(0, deadline - Date.now()),
  );
}

describe('token metadata is fair (a chain followed, metadata servers on loopback)', () => {
  let chain: LocalChain;
  let tarpit: Tarpit;
  let meta: MetadataServer;
  let t: TestApp;
  let hostileOrg: TestOrganization;
  let otherOrg: TestOrganization;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31802 });
    tarpit = await new Tarpit().start();
    meta = await new MetadataServer().start();
    t = await startFollowing(chain, {
      // A short timeout keeps the suite short; the fetches are scheduled the same way at 5 s.
      METADATA_TIMEOUT_MS: '1500',
      // The refresh test sends many requests from one address.
      RATE_LIMIT_PER_IP: '1000000',
    });
    hostileOrg = await createOrganization(t);
    otherOrg = await createOrganization(t);
  });
  afterAll(async () => {
    await t?.close();
    await meta?.stop();
    await tarpit?.stop();
    await chain?.stop();
  });

  /** Mints `count` tokens of a new contract whose every token URI points at the tarpit, all to `to`. */
  async function airdrop(to: string, count: number): Promise<Address> {
    const hostile = await chain.deployErc721({ name: 'Airdrop', symbol: 'DROP', baseUri: `${tarpit.origin}/token/` });
    await chain.write(hostile, ERC721_ABI, 'mintMany', [Array.from({ length: count }, () => to), 1n]);
    return hostile;
  }

  /** A collection with a working server, one token minted to `to`. */
  async function honestMint(to: string, name: string): Promise<void> {
    const honest = await chain.deployErc721({ name, symbol: 'OK', baseUri: `${meta.origin}/${name}/` });
    meta.json(`/${name}/1`, { name });
    await chain.write(honest, ERC721_ABI, 'mint', [to, 1n]);
  }

  it('120 tokens whose server never answers keep no other organization waiting, and their server sees a bounded number of connections', async () => {
    const hostileAddress = newAddress();
    const hostileWallet = await walletAt(t, hostileOrg, hostileAddress, 'airdropped');
    const otherAddress = newAddress();
    const otherWallet = await walletAt(t, otherOrg, otherAddress, 'ordinary');

    const airdropAt = Date.now();
    await airdrop(hostileAddress, 120);
    // The airdrop is being fetched (and holding connections) when the other organization's token arrives.
    await waitUntil(
      () => tarpit.connectionsBetween(airdropAt),
      (n) => n > 0,
      30_000,
    );
    await honestMint(otherAddress, 'ordinary');
    const token = await firstTokenOk(t, otherOrg, otherWallet, 15_000);
    expect(token.metadata.name).toBe('ordinary');

    // The circuit breaker: after 10 failures in a row the contract's fetches pause.
    await sleep(Math.max(0, airdropAt + 45_000 - Date.now()));
    expect(tarpit.connectionsBetween(airdropAt, airdropAt + 45_000)).toBeLessThanOrEqual(24);
    const airdropped = await heldTokens(t, hostileOrg, hostileWallet);
    expect(airdropped).toHaveLength(120);
    for (const tokenId of airdropped) {
      const held = await tokenOf(t, hostileOrg, tokenId);
      if (held.metadataStatus === 'failed') continue;
      expect(held).toMatchObject({ metadataStatus: 'pending', metadataError: expect.stringMatching(/circuit breaker/) });
    }
  });

  it('refreshing the airdropped tokens again and again neither jumps the queue nor gets past the breaker', async () => {
    const hostileAddress = newAddress();
    const hostileWallet = await walletAt(t, hostileOrg, hostileAddress, 'refreshed');
    const otherAddress = newAddress();
    const otherWallet = await walletAt(t, otherOrg, otherAddress, 'patient');

    const airdropAt = Date.now();
    await airdrop(hostileAddress, 60);
    const airdropped = await waitUntil(
      () => heldTokens(t, hostileOrg, hostileWallet),
      (ids) => ids.length === 60,
      30_000,
    );
    // A write key asks for every one of them again, every half second, for 20 s.
    let refreshing = true;
    const refresher = (async () => {
      while (refreshing) {
        await Promise.all(
          airdropped.map((id) => t.http().post(`/v1/tokens/${id}/metadata/refresh`).set(bearer(hostileOrg.adminKey)).expect(202)),
        );
        await sleep(500);
      }
    })();
    try {
      await sleep(2000);
      await honestMint(otherAddress, 'patient');
      const token = await firstTokenOk(t, otherOrg, otherWallet, 15_000);
      expect(token.metadata.name).toBe('patient');
      await sleep(Math.max(0, airdropAt + 20_000 - Date.now()));
    } finally {
      refreshing = false;
      await refresher;
    }
    expect(tarpit.connectionsBetween(airdropAt, airdropAt + 20_000)).toBeLessThanOrEqual(24);
  });
});

describe('which due tokens a fetcher takes first (a database of its own, no fetcher running)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let t: TestApp;
  let sync: TokenMetadataSyncService;

  beforeAll(async () => {
    db = await createIsolatedDatabase('metadata_claims');
    // No CHAIN_RPC_URLS: no worker claims behind the test's back.
    t = await createTestApp({ DATABASE_URL: db.url });
    sync = t.app.get(TokenMetadataSyncService);
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  /** Chain tokens as the follower creates them (pending, due at once), one transaction per call. */
  async function pendingTokens(org: TestOrganization, contract: string, count: number, firstId = 1): Promise<string[]> {
    const em = t.app.get(MikroORM).em.fork() as EntityManager;
    const keys = Array.from({ length: count }, (_, i) => ({
      organizationId: org.id,
      chainId: 31802,
      contractAddress: contract,
      blockchainTokenId: String(firstId + i),
      standard: 'erc721' as const,
    }));
    const tokens = await em.transactional((tx) => t.app.get(TokensService).ensureChainTokens(tx, keys));
    return [...tokens.values()];
  }

  /** Takes everything still due, so that each test starts from an empty queue. */
  async function drain(): Promise<void> {
    while ((await sync.claimDueMetadata(100, 3_600_000)).length > 0);
  }

  beforeEach(drain);

  it('takes organizations in turn: one organization’s long queue does not keep another’s new token waiting', async () => {
    const busy = await createOrganization(t);
    const quiet = await createOrganization(t);
    await pendingTokens(busy, newAddress(), 30);
    const [late] = await pendingTokens(quiet, newAddress(), 1);

    const claimed = await sync.claimDueMetadata(2, 60_000);
    expect(claimed.map((c) => c.organizationId).sort()).toEqual([busy.id, quiet.id].sort());
    expect(claimed.find((c) => c.organizationId === quiet.id)?.id).toBe(late);
  });

  it('takes an organization’s contracts in turn: one contract’s airdrop does not hold back its other tokens', async () => {
    const org = await createOrganization(t);
    const airdropped = newAddress();
    const collection = newAddress();
    await pendingTokens(org, airdropped, 20);
    const [own] = await pendingTokens(org, collection, 1);

    const claimed = await sync.claimDueMetadata(2, 60_000);
    expect(claimed.map((c) => c.contractAddress).sort()).toEqual([airdropped, collection].sort());
    expect(claimed.find((c) => c.contractAddress === collection)?.id).toBe(own);
  });

  it('a refreshed token waits behind the tokens other organizations already have waiting', async () => {
    const refresher = await createOrganization(t);
    const waiting = await createOrganization(t);
    const [refreshed] = await pendingTokens(refresher, newAddress(), 1);
    // Fetched once (ok), long before the other organization's tokens arrived.
    await t.app.get(TokenMetadataSyncService).applyFetchedMetadata(refreshed, { name: 'fetched' });
    const queued = await pendingTokens(waiting, newAddress(), 1);
    await t.http().post(`/v1/tokens/${refreshed}/metadata/refresh`).set(bearer(refresher.adminKey)).expect(202);

    const [first] = await sync.claimDueMetadata(1, 60_000);
    expect(first.id).toBe(queued[0]);
    const [second] = await sync.claimDueMetadata(1, 60_000);
    expect(second.id).toBe(refreshed);
  });
});
