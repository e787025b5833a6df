import { TestOrganization } from './support/factories';
import { ERC721_ABI, LocalChain } from './support/evm';
import {
  isTransactionEvent,
  startFollowing,
  transactionsFromWebhooks,
  waitApplied,
  walletAt,
  watchingOrganization,
} from './support/chain-fixture';
import { TestReceiver, waitUntil } from './support/receiver';
import { TestApp } from './support/test-app';
import { WsNodeProxy } from './support/ws-node-proxy';

/** Far beyond every wait of these suites: whatever is recorded here was woken by a pushed head. */
const NEVER_POLLS_MS = '600000';

/** The value of a metric of one chain (0 when it was never set), as of the last collection (up to METRICS_CACHE_MS old). */
async function metric(t: TestApp, name: string, chainId: number): Promise<number> {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const found = text.split('\n').find((l) => l.startsWith(`${name}{chainId="${chainId}"}`));
  return found === undefined ? 0 : Number(found.split(' ').pop());
}

// A node reached over ws pushes its new heads; each wakes the follower, so a mint is recorded and
// its webhook sent although the poll is ten minutes away. The node sits behind a proxy that can
// cut the connection or turn connections away while the chain itself goes on.
describe('Following a chain over WebSocket: new heads pushed', () => {
  let chain: LocalChain;
  let proxy: WsNodeProxy;
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;
  let nft: `0x${string}`;
  const chainId = 31430;
  const subscribed = () => metric(t, 'chain_new_heads_subscribed', chainId);
  const lost = () => metric(t, 'chain_new_heads_lost_total', chainId);

  /** Mints `tokenId` to the watched wallet and waits for its `transaction` webhook. */
  async function mintRecorded(tokenId: bigint): Promise<void> {
    const before = receiver.received.filter(isTransactionEvent(org.id)).length;
    const mint = await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], tokenId]);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length > before);
    const recorded = await transactionsFromWebhooks(t, org, receiver);
    expect(recorded.map((x) => x.chain!.transactionHash)).toContain(mint.transactionHash);
  }

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId });
    proxy = await new WsNodeProxy(chain.port).start();
    receiver = await new TestReceiver().start();
    nft = await chain.deployErc721();
    t = await startFollowing(chain, { CHAIN_RPC_URLS: `${chainId}=${proxy.url}`, CHAIN_POLL_INTERVAL_MS: NEVER_POLLS_MS });
    org = await watchingOrganization(t, receiver);
    await walletAt(t, org, chain.accounts[1], 'alice');
    // Caught up with the deployment at the first steps (at start, and busy until the head).
    await waitApplied(t, chain);
    await waitUntil(subscribed, (n) => n === 1);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await proxy?.stop();
    await chain?.stop();
  });

  it('records a mint and sends its webhook on the head the node pushes, the poll being ten minutes away', async () => {
    await mintRecorded(1n);
    await waitUntil(
      () => metric(t, 'chain_new_heads_pushed_total', chainId),
      (n) => n > 0,
    );
    expect(await subscribed()).toBe(1);
    expect(t.logs.some((l) => l.includes('the node pushes new heads; the poll every 600000 ms stays as a fallback'))).toBe(true);
  });

  it('subscribes again when the connection is cut, and the next pushed head wakes the follower', async () => {
    const before = await lost();
    proxy.dropAll();
    await waitUntil(lost, (n) => n === before + 1);
    await waitUntil(subscribed, (n) => n === 1);
    await mintRecorded(2n);
  });

  it('keeps subscribing again, with backoff, while the node is away, and follows on pushed heads once it is back', async () => {
    const before = await lost();
    proxy.away();
    // The connection cut, then two attempts in a row turned away: past where the client library
    // alone gives up for good (its first failed reconnection).
    await waitUntil(lost, (n) => n >= before + 3);
    expect(await subscribed()).toBe(0);
    expect(proxy.turnedAway).toBeGreaterThanOrEqual(2);
    expect(
      t.logs.some((l) => l.includes('new heads are not pushed (The socket has been closed.); polling every 600000 ms meanwhile')),
    ).toBe(true);
    proxy.back();
    await waitUntil(subscribed, (n) => n === 1);
    await mintRecorded(3n);
    expect(await subscribed()).toBe(1);
  }, 120_000);
});

// A node that answers eth_subscribe with an error: the follower polls as over http, and the
// subscription is asked for again from time to time (the provider may start pushing later).
describe('Following a chain over WebSocket: a node that refuses subscriptions', () => {
  let chain: LocalChain;
  let proxy: WsNodeProxy;
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;
  const chainId = 31431;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId });
    proxy = await new WsNodeProxy(chain.port, { refuseSubscriptions: true }).start();
    receiver = await new TestReceiver().start();
    t = await startFollowing(chain, { CHAIN_RPC_URLS: `${chainId}=${proxy.url}`, CHAIN_POLL_INTERVAL_MS: '100' });
    org = await watchingOrganization(t, receiver);
    await walletAt(t, org, chain.accounts[1], 'alice');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await proxy?.stop();
    await chain?.stop();
  });

  it('follows by polling over the same connection, asking for the subscription again with backoff', async () => {
    const nft = await chain.deployErc721();
    const mint = await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], 1n]);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length === 1);
    const recorded = await transactionsFromWebhooks(t, org, receiver);
    expect(recorded.map((x) => x.chain!.transactionHash)).toEqual([mint.transactionHash]);

    expect(proxy.refused).toBeGreaterThanOrEqual(1);
    await waitUntil(
      () => metric(t, 'chain_new_heads_lost_total', chainId),
      (n) => n >= 1,
    );
    expect(await metric(t, 'chain_new_heads_subscribed', chainId)).toBe(0);
  });
});
