import {
  MAX_OPEN_SYNCS_PER_ORGANIZATION,
  MAX_SYNC_BLOCKS,
  nextInTurn,
  syncEndBlock,
  syncRangeRefusal,
  syncRequestOutcome,
} from './wallet-sync.rules';

describe('wallet sync range', () => {
  it('accepts up to 1,000,000 blocks up to the applied block, and any start while the follower has not started', () => {
    expect(MAX_SYNC_BLOCKS).toBe(1_000_000);
    expect(syncRangeRefusal(1_999_999, 1_000_000)).toBeNull();
    expect(syncRangeRefusal(999_999, 0)).toBeNull();
    expect(syncRangeRefusal(10, 500)).toBeNull();
    expect(syncRangeRefusal(null, 0)).toBeNull();
  });

  it('refuses one block more, naming the lowest start it accepts', () => {
    expect(syncRangeRefusal(1_000_000, 0)).toBe(
      'A sync replays at most 1,000,000 blocks; the chain is applied up to block 1000000, so fromBlock must be at least 1.',
    );
  });

  it('ends at the applied block, or after 1,000,000 blocks', () => {
    expect(syncEndBlock(500, 100)).toBe(500);
    expect(syncEndBlock(5_000_000, 0)).toBe(999_999);
    expect(syncEndBlock(5, 10)).toBe(5);
  });
});

describe('wallet sync requests', () => {
  const open = (id: string, walletId: string, chainId: number, fromBlock: number) => ({ id, walletId, chainId, fromBlock });
  const request = { walletId: 'w1', chainId: 1, fromBlock: 100 };

  it('answers the open sync of the same wallet, chain and start block', () => {
    const same = open('s1', 'w1', 1, 100);
    expect(syncRequestOutcome([open('s0', 'w2', 1, 100), same], request)).toEqual({ kind: 'existing', sync: same });
  });

  it('refuses another start block while the wallet has an open sync on the chain', () => {
    const other = open('s1', 'w1', 1, 50);
    expect(syncRequestOutcome([other], request)).toEqual({ kind: 'inProgress', sync: other });
  });

  it('creates one when the wallet has none open on that chain, up to five open per organization', () => {
    expect(MAX_OPEN_SYNCS_PER_ORGANIZATION).toBe(5);
    expect(syncRequestOutcome([], request)).toEqual({ kind: 'create' });
    const four = [open('a', 'w2', 1, 0), open('b', 'w3', 1, 0), open('c', 'w4', 1, 0), open('d', 'w1', 2, 100)];
    expect(syncRequestOutcome(four, request)).toEqual({ kind: 'create' });
    expect(syncRequestOutcome([...four, open('e', 'w5', 1, 0)], request)).toEqual({ kind: 'limitReached' });
  });

  it('answers a repeated request at the limit with its open sync, and refuses another start block with 409 rather than 422', () => {
    const five = [open('a', 'w2', 1, 0), open('b', 'w3', 1, 0), open('c', 'w4', 1, 0), open('d', 'w5', 1, 0), open('e', 'w1', 1, 100)];
    expect(syncRequestOutcome(five, request)).toEqual({ kind: 'existing', sync: five[4] });
    expect(syncRequestOutcome(five, { ...request, fromBlock: 7 })).toEqual({ kind: 'inProgress', sync: five[4] });
  });
});

describe('wallet sync turns', () => {
  const head = (organizationId: string) => ({ organizationId, id: `sync of ${organizationId}` });

  it('serves nothing when no sync is open', () => {
    expect(nextInTurn([], null)).toBeNull();
    expect(nextInTurn([], 'b')).toBeNull();
  });

  it('serves the organizations in id order, one range each, wrapping around', () => {
    const heads = [head('c'), head('a'), head('b')];
    expect(nextInTurn(heads, null)).toEqual(head('a'));
    expect(nextInTurn(heads, 'a')).toEqual(head('b'));
    expect(nextInTurn(heads, 'b')).toEqual(head('c'));
    expect(nextInTurn(heads, 'c')).toEqual(head('a'));
  });

  it('goes on after an organization whose syncs all finished, and serves a lone organization again and again', () => {
    expect(nextInTurn([head('a'), head('c')], 'b')).toEqual(head('c'));
    expect(nextInTurn([head('a')], 'a')).toEqual(head('a'));
  });

  it('gives a newcomer its turn before the organization served last comes again', () => {
    // "a" has many long syncs and was just served; "b" asks for one: it is next.
    expect(nextInTurn([head('a'), head('b')], 'a')).toEqual(head('b'));
  });
});
