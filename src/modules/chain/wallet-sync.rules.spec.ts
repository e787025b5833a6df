import { MAX_SYNC_BLOCKS, syncEndBlock, syncRangeRefusal } from './wallet-sync.rules';

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
