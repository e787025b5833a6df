import { balanceKey, BatchMovement, batchFingerprint, planBatch } from './transaction-batch.rules';
import { UINT256_MAX } from '../tokens/uint256';

const A = '01900000-0000-7000-8000-00000000000a';
const B = '01900000-0000-7000-8000-00000000000b';
const T = '01900000-0000-7000-8000-0000000000ff';
const U = '01900000-0000-7000-8000-0000000000ee';

const mint = (to: string, amount = '1', tokenId = T): BatchMovement => ({
  type: 'nftMint',
  tokenId,
  fromWalletId: null,
  toWalletId: to,
  amount,
});
const transfer = (from: string, to: string, amount = '1'): BatchMovement => ({
  type: 'nftTransfer',
  tokenId: T,
  fromWalletId: from,
  toWalletId: to,
  amount,
});
const burn = (from: string, amount = '1'): BatchMovement => ({ type: 'nftBurn', tokenId: T, fromWalletId: from, toWalletId: null, amount });

const tokens = new Set([T, U]);
const wallets = new Set([A, B]);

describe('planBatch', () => {
  it('lets later movements spend what earlier ones credited, and nets the changes per row', () => {
    const plan = planBatch([mint(A, '5'), transfer(A, B, '3'), burn(B, '1'), mint(A, '2', U)], tokens, wallets, new Map());
    expect(plan).toEqual({
      changes: [
        { walletId: A, tokenId: U, delta: 2n },
        { walletId: A, tokenId: T, delta: 2n },
        { walletId: B, tokenId: T, delta: 2n },
      ].sort((x, y) => (x.walletId + x.tokenId < y.walletId + y.tokenId ? -1 : 1)),
    });
  });

  it('starts from the locked balances and drops rows whose net change is zero', () => {
    const plan = planBatch([transfer(A, B, '4'), transfer(B, A, '4')], tokens, wallets, new Map([[balanceKey(A, T), 4n]]));
    expect(plan).toEqual({ changes: [] });
  });

  it('refuses at the first movement that would overdraw, naming its index', () => {
    const plan = planBatch([mint(A, '1'), transfer(A, B, '2'), burn(A, '9')], tokens, wallets, new Map());
    expect(plan).toEqual({ refusal: expect.objectContaining({ index: 1, status: 422, code: 'INSUFFICIENT_BALANCE', field: 'amount' }) });
  });

  it('refuses unknown tokens and wallets in request order', () => {
    const unknown = '01900000-0000-7000-8000-000000000999';
    expect(planBatch([mint(A), mint(unknown)], tokens, wallets, new Map())).toEqual({
      refusal: expect.objectContaining({ index: 1, status: 404, code: 'WALLET_NOT_FOUND', field: 'toWalletId' }),
    });
    expect(planBatch([mint(A, '1', unknown), burn(unknown)], tokens, wallets, new Map())).toEqual({
      refusal: expect.objectContaining({ index: 0, status: 404, code: 'TOKEN_NOT_FOUND', field: 'tokenId' }),
    });
  });

  it('refuses a credit past 2^256-1', () => {
    const plan = planBatch([mint(A, '1')], tokens, wallets, new Map([[balanceKey(A, T), UINT256_MAX]]));
    expect(plan).toEqual({ refusal: expect.objectContaining({ index: 0, code: 'BALANCE_OVERFLOW' }) });
  });
});

describe('batchFingerprint', () => {
  it('depends on every movement and their order', () => {
    const one = [mint(A), mint(B)];
    expect(batchFingerprint(one)).toBe(batchFingerprint([mint(A), mint(B)]));
    expect(batchFingerprint(one)).not.toBe(batchFingerprint([mint(B), mint(A)]));
    expect(batchFingerprint(one)).not.toBe(batchFingerprint([mint(A)]));
  });
});
