import { NewHeadsSubscription, PUSHES_STALE_MS } from './new-heads';
import type { OnNewHead } from './ws-transport';

/** A node's subscriptions as the transport offers them: each call is one subscription, driven by hand. */
function fakeNode() {
  const subscriptions: { onHead: OnNewHead; onLost: (error: unknown) => void; ended: boolean }[] = [];
  let refuse: Error | null = null;
  const subscribe = jest.fn((onHead: OnNewHead, onLost: (error: unknown) => void) => {
    if (refuse) return Promise.reject(refuse);
    const subscription = { onHead, onLost, ended: false };
    subscriptions.push(subscription);
    return Promise.resolve(() => {
      subscription.ended = true;
    });
  });
  return { subscribe, subscriptions, refuseWith: (error: Error | null) => (refuse = error) };
}

const logger = () => ({ log: jest.fn(), warn: jest.fn() });

describe('NewHeadsSubscription', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.spyOn(Math, 'random').mockReturnValue(0.5); // no jitter
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('subscribes at the first listener and hands every pushed head to the listeners', async () => {
    const node = fakeNode();
    const heads = new NewHeadsSubscription(node.subscribe, 1, 2000, logger());
    const seen: number[] = [];
    heads.listen((n) => seen.push(n));
    heads.listen((n) => seen.push(-n));
    await jest.advanceTimersByTimeAsync(0);
    expect(node.subscribe).toHaveBeenCalledTimes(1);
    expect(heads.subscribed).toBe(true);
    node.subscriptions[0].onHead(7);
    expect(seen).toEqual([7, -7]);
    heads.stop();
  });

  it('subscribes again after a loss with a growing backoff that starts over only once heads arrive', async () => {
    const node = fakeNode();
    const log = logger();
    const heads = new NewHeadsSubscription(node.subscribe, 1, 2000, log);
    heads.listen(() => undefined);
    await jest.advanceTimersByTimeAsync(0);
    node.subscriptions[0].onLost(new Error('socket closed'));
    expect(heads.subscribed).toBe(false);
    expect(log.warn).toHaveBeenCalledWith(
      { failures: 1, retryInMs: 1000 },
      'new heads are not pushed (socket closed); polling every 2000 ms meanwhile, subscribing again',
    );
    await jest.advanceTimersByTimeAsync(1000);
    expect(node.subscribe).toHaveBeenCalledTimes(2);
    // Accepted, then lost again before any head: the pause doubles.
    node.subscriptions[1].onLost(new Error('socket closed'));
    await jest.advanceTimersByTimeAsync(1999);
    expect(node.subscribe).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(node.subscribe).toHaveBeenCalledTimes(3);
    node.subscriptions[2].onHead(10);
    node.subscriptions[2].onLost(new Error('socket closed'));
    await jest.advanceTimersByTimeAsync(1000);
    expect(node.subscribe).toHaveBeenCalledTimes(4);
    heads.stop();
  });

  it('keeps asking a node that refuses, and ignores what a lost subscription still delivers', async () => {
    const node = fakeNode();
    const heads = new NewHeadsSubscription(node.subscribe, 1, 2000, logger());
    const seen: number[] = [];
    heads.listen((n) => seen.push(n));
    await jest.advanceTimersByTimeAsync(0);
    const old = node.subscriptions[0];
    node.refuseWith(new Error('eth_subscribe refused'));
    old.onLost(new Error('socket closed'));
    old.onHead(5);
    old.onLost(new Error('again'));
    expect(seen).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000 + 2000 + 4000);
    expect(node.subscribe).toHaveBeenCalledTimes(4);
    node.refuseWith(null);
    await jest.advanceTimersByTimeAsync(8000);
    expect(heads.subscribed).toBe(true);
    node.subscriptions[1].onHead(6);
    expect(seen).toEqual([6]);
    heads.stop();
  });

  it('ends a subscription that stopped pushing while the polls found newer heads, and subscribes again', async () => {
    const node = fakeNode();
    const heads = new NewHeadsSubscription(node.subscribe, 1, 2000, logger());
    heads.listen(() => undefined);
    await jest.advanceTimersByTimeAsync(0);
    heads.polled(100, 0);
    heads.polled(101, 1_000);
    heads.polled(105, 1_000 + PUSHES_STALE_MS - 1);
    expect(node.subscriptions[0].ended).toBe(false);
    heads.polled(106, 1_000 + PUSHES_STALE_MS);
    expect(node.subscriptions[0].ended).toBe(true);
    expect(heads.subscribed).toBe(false);
    await jest.advanceTimersByTimeAsync(1000);
    expect(node.subscribe).toHaveBeenCalledTimes(2);
    heads.stop();
  });

  it('subscribes no more once stopped', async () => {
    const node = fakeNode();
    const heads = new NewHeadsSubscription(node.subscribe, 1, 2000, logger());
    heads.listen(() => undefined);
    await jest.advanceTimersByTimeAsync(0);
    node.subscriptions[0].onLost(new Error('socket closed'));
    heads.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(node.subscribe).toHaveBeenCalledTimes(1);
  });
});
