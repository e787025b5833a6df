import { isValidIdempotencyKey, requestFingerprint, transactionType } from './transaction.rules';

const A = '01900000-0000-7000-8000-00000000000a';
const B = '01900000-0000-7000-8000-00000000000b';
const T = '01900000-0000-7000-8000-0000000000ff';

describe('transaction rules', () => {
  it('classifies movements by their parties', () => {
    expect(transactionType(null, A)).toEqual({ type: 'nftMint' });
    expect(transactionType(A, null)).toEqual({ type: 'nftBurn' });
    expect(transactionType(A, B)).toEqual({ type: 'nftTransfer' });
  });

  it('refuses a movement without parties or to the sender itself', () => {
    const none = transactionType(null, null);
    expect('errors' in none && none.errors.map((e) => e.field)).toEqual(['fromWalletId', 'toWalletId']);
    const self = transactionType(A, A);
    expect('errors' in self && self.errors.map((e) => e.field)).toEqual(['toWalletId']);
  });

  it('accepts sane idempotency keys only', () => {
    expect(isValidIdempotencyKey('3f1c2b9e-4a0d-4c1e-9a55-0b6f2d7e8c11')).toBe(true);
    expect(isValidIdempotencyKey('order-42/retry')).toBe(true);
    expect(isValidIdempotencyKey('')).toBe(false);
    expect(isValidIdempotencyKey('has space')).toBe(false);
    expect(isValidIdempotencyKey('x'.repeat(256))).toBe(false);
    expect(isValidIdempotencyKey('caf\u00e9')).toBe(false);
  });

  it('fingerprints requests by meaning', () => {
    const base = { tokenId: T, fromWalletId: A, toWalletId: B, amount: '1' };
    expect(requestFingerprint(base)).toBe(requestFingerprint({ ...base, tokenId: T.toUpperCase() }));
    expect(requestFingerprint(base)).not.toBe(requestFingerprint({ ...base, amount: '2' }));
    expect(requestFingerprint(base)).not.toBe(requestFingerprint({ ...base, fromWalletId: null }));
    expect(requestFingerprint(base)).not.toBe(requestFingerprint({ ...base, fromWalletId: B, toWalletId: A }));
    expect(requestFingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
  });
});
