import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Address, getAddress, Hash } from 'viem';
import { TestOrganization } from './support/factories';
import { ContractArtifact, ERC721_ABI, LocalChain } from './support/evm';
import logFloodArtifact from './support/contracts/TestLogFlood.json';
import {
  balances,
  chainFigures,
  isTransactionEvent,
  startFollowing,
  transactionsFromWebhooks,
  waitApplied,
  walletAt,
  watchingOrganization,
} from './support/chain-fixture';
import { TestReceiver, waitUntil } from './support/receiver';
import { TestApp } from './support/test-app';

const LOG_FLOOD = logFloodArtifact as ContractArtifact;

/**
 * Anyone can fill one block with logs that carry only an NFT topic0 (no parties, so no movement
 * of anyone): past the client's answer size, or past a provider's result cap, eth_getLogs cannot
 * answer that block whole. The follower reads such a block by watched address and goes on; every
 * organization's movements in and after it are recorded exactly once.
 */

/** Sends `calls` so that they are mined together in one new block; returns that block's number. */
async function inOneBlock(chain: LocalChain, calls: (() => Promise<Hash>)[]): Promise<number> {
  await chain.setAutomine(false);
  try {
    const hashes: Hash[] = [];
    for (const call of calls) hashes.push(await call());
    await chain.mine(1);
    const number = await chain.blockNumber();
    const block = (await chain.request('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])) as { transactions: string[] };
    // Every call made it into this very block (none reverted out of it, none left pending).
    expect(new Set(block.transactions)).toEqual(new Set(hashes));
    return number;
  } finally {
    await chain.setAutomine(true);
  }
}

async function metric(t: TestApp, name: string, chainId: number): Promise<number> {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const match = new RegExp(`^${name}\\{chainId="${chainId}"\\} (\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

const countFor = (receiver: TestReceiver, org: TestOrganization) => receiver.received.filter(isTransactionEvent(org.id)).length;

describe('Following a chain: a block whose logs are over the client’s answer size', () => {
  let chain: LocalChain;
  let t: TestApp | null = null;
  let receiver: TestReceiver;
  let orgA: TestOrganization, orgB: TestOrganization;
  let alice: Address, bob: Address, attacker: Address;
  let aliceWallet: string, bobWallet: string;
  let nft: Address, flood: Address;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31420 });
    [attacker, alice, bob] = [chain.accounts[0], chain.accounts[1], chain.accounts[2]];
    receiver = await new TestReceiver().start();
    nft = await chain.deployErc721();
    flood = await chain.deploy(LOG_FLOOD);
    t = await startFollowing(chain);
    orgA = await watchingOrganization(t, receiver, 'org A');
    orgB = await watchingOrganization(t, receiver, 'org B');
    aliceWallet = await walletAt(t, orgA, alice, 'alice');
    bobWallet = await walletAt(t, orgB, bob, 'bob');
    await waitApplied(t, chain);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  /** 25,000 bare TransferSingle logs (about 10.7 MB of eth_getLogs answer) and a mint to alice in one block, then a mint to bob. */
  async function floodedBlockThenMint(aliceToken: bigint, bobToken: bigint): Promise<{ flooded: number; later: number }> {
    const flooded = await inOneBlock(chain, [
      () => chain.send(flood, LOG_FLOOD.abi, 'flood', [25_000n], attacker),
      () => chain.send(nft, ERC721_ABI, 'mint', [alice, aliceToken], chain.accounts[5]),
    ]);
    const later = Number((await chain.write(nft, ERC721_ABI, 'mint', [bob, bobToken])).blockNumber);
    return { flooded, later };
  }

  it('reads the block by watched address: the mint in it and the one after it are recorded once, for each organization', async () => {
    const { flooded, later } = await floodedBlockThenMint(1n, 2n);
    // The answer really is over viem's 10 MiB bound (its size, asked for without a client bound).
    const answer = await fetch(chain.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ fromBlock: `0x${flooded.toString(16)}`, toBlock: `0x${flooded.toString(16)}` }],
      }),
    });
    expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(10 * 1024 * 1024);

    const figures = await waitApplied(t!, chain, later, 60_000);
    expect(figures.appliedBlock).toBeGreaterThanOrEqual(later);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(orgA.id)).length >= 1 && r.filter(isTransactionEvent(orgB.id)).length >= 1);

    const [aliceMint] = await transactionsFromWebhooks(t!, orgA, receiver);
    expect(aliceMint).toMatchObject({ type: 'nftMint', toWalletId: aliceWallet, amount: '1' });
    expect(aliceMint.chain!.blockNumber).toBe(flooded);
    const [bobMint] = await transactionsFromWebhooks(t!, orgB, receiver);
    expect(bobMint).toMatchObject({ type: 'nftMint', toWalletId: bobWallet, amount: '1' });
    expect(bobMint.chain!.blockNumber).toBe(later);
    expect(await metric(t!, 'chain_blocks_read_by_address_total', chain.chainId)).toBeGreaterThanOrEqual(1);

    // Following goes on past it, and nothing is recorded twice.
    const next = Number((await chain.write(nft, ERC721_ABI, 'mint', [alice, 3n])).blockNumber);
    await waitApplied(t!, chain, next, 60_000);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(orgA.id)).length >= 2);
    expect(countFor(receiver, orgA)).toBe(2);
    expect(countFor(receiver, orgB)).toBe(1);
    const aliceTokens = (await transactionsFromWebhooks(t!, orgA, receiver)).map((x) => x.tokenId);
    expect(await balances(t!, orgA, aliceWallet)).toEqual(Object.fromEntries(aliceTokens.map((id) => [id, '1'])));
  }, 120_000);

  it('gets past such a block after a restart as well', async () => {
    // Counters belong to the process (this one), so the new app goes on from this figure.
    const readBefore = await metric(t!, 'chain_blocks_read_by_address_total', chain.chainId);
    await t!.close();
    t = null;
    const { flooded, later } = await floodedBlockThenMint(4n, 5n);
    const before = countFor(receiver, orgA);
    t = await startFollowing(chain);

    await waitApplied(t, chain, later, 60_000);
    await receiver.waitFor(
      (r) => r.filter(isTransactionEvent(orgA.id)).length > before && r.filter(isTransactionEvent(orgB.id)).length >= 2,
    );
    const recordedA = await transactionsFromWebhooks(t, orgA, receiver);
    const recordedB = await transactionsFromWebhooks(t, orgB, receiver);
    expect(recordedA.map((x) => x.chain!.blockNumber)).toContain(flooded);
    expect(recordedA).toHaveLength(3);
    expect(recordedB.map((x) => x.chain!.blockNumber)).toContain(later);
    expect(recordedB).toHaveLength(2);
    expect(await metric(t, 'chain_blocks_read_by_address_total', chain.chainId)).toBeGreaterThan(readBefore);
    expect((await chainFigures(t, chain.chainId)).appliedBlock).toBeGreaterThanOrEqual(later);
  }, 120_000);
});

/** Longer than the follower's JSON-RPC timeout (10 s): an answer this late is a call that timed out. */
const LATER_THAN_TIMEOUT_MS = 12_000;

/**
 * A JSON-RPC proxy in front of the node that answers eth_getLogs the way hosted providers cap it:
 * an answer of more than `cap` logs is refused with -32005 "query returned more than N results",
 * at once, or (`slow`) only after the client has given up waiting, as an overloaded node does.
 */
class ResultCappingProxy {
  readonly refused: unknown[] = [];
  private server: Server | null = null;

  constructor(
    private readonly upstream: string,
    private readonly cap: number,
    private readonly slow = false,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        const calls = Array.isArray(body) ? body : [body];
        Promise.all(calls.map((call) => this.answer(call as { id: number; method: string; params: unknown[] }))).then(
          (answers) =>
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0])),
          () => res.writeHead(502).end(),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  private async answer(call: { id: number; method: string; params: unknown[] }): Promise<unknown> {
    const res = await fetch(this.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
    const answer = (await res.json()) as { result?: unknown };
    if (call.method === 'eth_getLogs' && Array.isArray(answer.result) && answer.result.length > this.cap) {
      this.refused.push(call.params[0]);
      if (this.slow) await new Promise((resolve) => setTimeout(resolve, LATER_THAN_TIMEOUT_MS));
      return { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: `query returned more than ${this.cap} results` } };
    }
    return answer;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('Following a chain: a node that caps eth_getLogs answers at a number of results', () => {
  const CAP = 50;
  let chain: LocalChain;
  let proxy: ResultCappingProxy;
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31421 });
    proxy = await new ResultCappingProxy(chain.rpcUrl, CAP).start();
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.stop();
    await receiver?.stop();
    await chain?.stop();
  });

  it('records every movement of blocks with more logs than the cap, whatever the logs, and follows on', async () => {
    const [attacker, alice, bob] = chain.accounts;
    const nft = await chain.deployErc721();
    const flood = await chain.deploy(LOG_FLOOD);
    t = await startFollowing(chain, { CHAIN_RPC_URLS: `${chain.chainId}=${proxy.url}` });
    const orgA = await watchingOrganization(t, receiver, 'org A');
    const orgB = await watchingOrganization(t, receiver, 'org B');
    await walletAt(t, orgA, alice, 'alice');
    await walletAt(t, orgB, bob, 'bob');
    // Sixty more wallets of org B: their mints in one block are more than the cap for one OR-list.
    const many = Array.from({ length: 60 }, (_, i) => getAddress(`0x${(0xb0b000 + i).toString(16).padStart(40, '0')}`));
    for (const [i, address] of many.entries()) await walletAt(t, orgB, address, `many ${i}`);
    await waitApplied(t, chain);

    // Bare logs beyond the cap with a mint to alice; mints to sixty watched addresses; sixty mints to
    // alice alone (one address, one event: only the transaction's receipt can hold them); then bob.
    const flooded = await inOneBlock(chain, [
      () => chain.send(flood, LOG_FLOOD.abi, 'flood', [BigInt(CAP * 2)], attacker),
      () => chain.send(nft, ERC721_ABI, 'mint', [alice, 1n], chain.accounts[5]),
    ]);
    const toMany = Number((await chain.write(nft, ERC721_ABI, 'mintMany', [many, 100n])).blockNumber);
    const toAlice = Number((await chain.write(nft, ERC721_ABI, 'mintMany', [Array(60).fill(alice), 200n])).blockNumber);
    const later = Number((await chain.write(nft, ERC721_ABI, 'mint', [bob, 2n])).blockNumber);

    await waitApplied(t, chain, later, 60_000);
    await receiver.waitFor(
      (r) => r.filter(isTransactionEvent(orgA.id)).length >= 61 && r.filter(isTransactionEvent(orgB.id)).length >= 61,
      60_000,
    );
    const recordedA = await transactionsFromWebhooks(t, orgA, receiver);
    const recordedB = await transactionsFromWebhooks(t, orgB, receiver);
    expect(recordedA.map((x) => [x.type, x.chain!.blockNumber])).toEqual([['nftMint', flooded], ...Array(60).fill(['nftMint', toAlice])]);
    expect(recordedB.map((x) => [x.type, x.chain!.blockNumber])).toEqual([...Array(60).fill(['nftMint', toMany]), ['nftMint', later]]);
    expect(new Set(recordedA.map((x) => `${x.chain!.transactionHash}:${x.chain!.logIndex}`)).size).toBe(61);
    // The node did refuse: the blocks were read in pieces, never whole again and again.
    expect(proxy.refused.length).toBeGreaterThan(0);
    expect(await metric(t, 'chain_blocks_read_by_address_total', chain.chainId)).toBeGreaterThanOrEqual(3);
    expect(await metric(t, 'chain_unreadable_transactions_total', chain.chainId)).toBe(0);
    // Caught up, the trouble is over and no longer shown.
    await waitUntil(
      () => chainFigures(t, chain.chainId),
      (f) => f.lastError === null,
      30_000,
    );
  }, 180_000);
});

describe('Following a chain: a node that times out on a block with too many logs', () => {
  let chain: LocalChain;
  let proxy: ResultCappingProxy;
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31422 });
    proxy = await new ResultCappingProxy(chain.rpcUrl, 50, true).start();
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.stop();
    await receiver?.stop();
    await chain?.stop();
  });

  it('reads the block by watched address while the node answers light calls, and follows on', async () => {
    const [attacker, alice, bob] = chain.accounts;
    const nft = await chain.deployErc721();
    const flood = await chain.deploy(LOG_FLOOD);
    t = await startFollowing(chain, { CHAIN_RPC_URLS: `${chain.chainId}=${proxy.url}` });
    const orgA = await watchingOrganization(t, receiver, 'org A');
    const orgB = await watchingOrganization(t, receiver, 'org B');
    await walletAt(t, orgA, alice, 'alice');
    await walletAt(t, orgB, bob, 'bob');
    await waitApplied(t, chain);

    const flooded = await inOneBlock(chain, [
      () => chain.send(flood, LOG_FLOOD.abi, 'flood', [100n], attacker),
      () => chain.send(nft, ERC721_ABI, 'mint', [alice, 1n], chain.accounts[5]),
    ]);
    const later = Number((await chain.write(nft, ERC721_ABI, 'mint', [bob, 2n])).blockNumber);

    await waitApplied(t, chain, later, 90_000);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(orgA.id)).length >= 1 && r.filter(isTransactionEvent(orgB.id)).length >= 1);
    expect((await transactionsFromWebhooks(t, orgA, receiver)).map((x) => [x.type, x.chain!.blockNumber])).toEqual([['nftMint', flooded]]);
    expect((await transactionsFromWebhooks(t, orgB, receiver)).map((x) => [x.type, x.chain!.blockNumber])).toEqual([['nftMint', later]]);
    expect(proxy.refused.length).toBeGreaterThan(0);
    expect(await metric(t, 'chain_blocks_read_by_address_total', chain.chainId)).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
