import { UINT256_MAX } from '../tokens/uint256';
import { BALANCE_CAP, compareInLockOrder, creditFits, inLockOrder } from './balance.rules';

const W1 = '01900000-0000-7000-8000-00000000000a';
const W2 = '01900000-0000-7000-8000-00000000000b';
const T1 = '01900000-0000-7000-8000-0000000000f0';
const T2 = '01900000-0000-7000-8000-0000000000ff';

describe('balance rules', () => {
  it('caps a balance at 2^256-1', () => {
    expect(BALANCE_CAP).toBe(UINT256_MAX);
    expect(creditFits(UINT256_MAX - 5n, 5n)).toBe(true);
    expect(creditFits(UINT256_MAX - 5n, 6n)).toBe(false);
    expect(creditFits(0n, UINT256_MAX)).toBe(true);
    expect(creditFits(1n, UINT256_MAX)).toBe(false);
  });

  it('orders rows by wallet, then token, whatever order they came in', () => {
    const rows = [
      { walletId: W2, tokenId: T1 },
      { walletId: W1, tokenId: T2 },
      { walletId: W2, tokenId: T2 },
      { walletId: W1, tokenId: T1 },
    ];
    expect(inLockOrder(rows)).toEqual([
      { walletId: W1, tokenId: T1 },
      { walletId: W1, tokenId: T2 },
      { walletId: W2, tokenId: T1 },
      { walletId: W2, tokenId: T2 },
    ]);
    expect(rows[0]).toEqual({ walletId: W2, tokenId: T1 });
    expect(compareInLockOrder({ walletId: W1, tokenId: T1 }, { walletId: W1, tokenId: T1 })).toBe(0);
  });

  it('puts the wallet first: a later wallet waits behind every token of an earlier one', () => {
    expect(compareInLockOrder({ walletId: W1, tokenId: T2 }, { walletId: W2, tokenId: T1 })).toBeLessThan(0);
  });
});
