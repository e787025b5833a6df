import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { bearer, TestOrganization } from './support/factories';
import { ERC721_ABI, LocalChain } from './support/evm';
import {
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

// A node that stops answering (SIGSTOP) never touches readiness or API answers; the follower
// backs off, shows the error, and resumes where it stopped once the node answers again.
describe('Following a chain: the node paused and resumed', () => {
  let chain: LocalChain;
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31412 });
    receiver = await new TestReceiver().start();
    t = await startFollowing(chain);
    org = await watchingOrganization(t, receiver);
    await walletAt(t, org, chain.accounts[1], 'alice');
  });
  afterAll(async () => {
    chain?.resume();
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  it('keeps /health/ready and the API answering while the node is frozen, then records what happened meanwhile', async () => {
    const nft = await chain.deployErc721();
    await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], 1n]);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length === 1);

    chain.pause();
    try {
      const stuck = await waitUntil(
        () => chainFigures(t, chain.chainId),
        (f) => f.lastError !== null,
        30_000,
      );
      expect(stuck.lastError).toMatch(/timed out|took too long|timeout/i);
      await t.http().get('/health/ready').expect(200);
      await t.http().get('/v1/wallets').set(bearer(org.adminKey)).expect(200);
      const metrics = (await t.http().get('/metrics').expect(200)).text;
      expect(metrics).toContain('chain_node_up{chainId="31412"} 0');
    } finally {
      chain.resume();
    }

    const second = await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], 2n]);
    const figures = await waitUntil(
      () => chainFigures(t, chain.chainId),
      (f) => f.appliedBlock !== null && f.appliedBlock >= Number(second.blockNumber) && f.lastError === null,
      60_000,
    );
    expect(figures.lastError).toBeNull();
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length === 2);
    const recorded = await transactionsFromWebhooks(t, org, receiver);
    expect(recorded.map((x) => x.chain!.transactionHash)).toContain(second.transactionHash);
  }, 120_000);
});

/**
 * A JSON-RPC proxy in front of the node that refuses eth_getLogs over more than `maxSpan` blocks,
 * the way hosted providers do, and remembers every span it was asked for.
 */
class RangeLimitingProxy {
  readonly spans: { span: number; refused: boolean }[] = [];
  private server: Server | null = null;

  constructor(
    private readonly upstream: string,
    private readonly maxSpan: number,
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
    if (call.method === 'eth_getLogs') {
      const filter = call.params[0] as { fromBlock: string; toBlock: string };
      const span = Number(filter.toBlock) - Number(filter.fromBlock) + 1;
      const refused = span > this.maxSpan;
      this.spans.push({ span, refused });
      if (refused) {
        return { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: `query exceeds max block range ${this.maxSpan}` } };
      }
    }
    const res = await fetch(this.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
    return res.json();
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('Following a chain: a node that refuses wide ranges', () => {
  let chain: LocalChain;
  let proxy: RangeLimitingProxy;
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31413 });
    proxy = await new RangeLimitingProxy(chain.rpcUrl, 4).start();
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.stop();
    await receiver?.stop();
    await chain?.stop();
  });

  it('halves the range until the node accepts it, and records every movement of the backlog', async () => {
    const alice = chain.accounts[1];
    const nft = await chain.deployErc721();
    for (let id = 1n; id <= 20n; id++) await chain.write(nft, ERC721_ABI, 'mint', [alice, id]);
    await chain.mine(3);
    const backlog = (await chain.blockNumber()) + 1;
    t = await startFollowing(chain, { CHAIN_RPC_URLS: `31413=${proxy.url}`, CHAIN_MAX_BLOCK_RANGE: '64' });
    const org = await watchingOrganization(t, receiver);
    await walletAt(t, org, alice, 'alice');

    await waitApplied(t, chain);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length === 20);
    const recorded = await transactionsFromWebhooks(t, org, receiver);
    expect(recorded.map((x) => x.type)).toEqual(Array(20).fill('nftMint'));
    // The whole backlog at first (under CHAIN_MAX_BLOCK_RANGE), then half of it each time.
    const refused = proxy.spans.filter((x) => x.refused).map((x) => x.span);
    expect(refused[0]).toBe(backlog);
    expect(refused).toEqual(refused.map((_, k) => Math.floor(backlog / 2 ** k)));
    expect(Math.floor(refused[refused.length - 1] / 2)).toBeLessThanOrEqual(4);
    expect(proxy.spans.filter((s) => !s.refused).every((s) => s.span <= 4)).toBe(true);
    expect((await chainFigures(t, chain.chainId)).lastError).toBeNull();
    const metrics = (await t.http().get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/chain_range_refusals_total\{chainId="31413"\} [1-9]/);
  });
});
