import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { CreateTransactionRequestDto } from './dto/create-transaction.request.dto';
import { validateBatchItems } from './transaction-batch.validation';

const A = '01900000-0000-7000-8000-00000000000a';
const B = '01900000-0000-7000-8000-00000000000b';
const T = '01900000-0000-7000-8000-0000000000ff';

/** What the DTO alone (the single endpoint's rules) says of an item. */
const dtoAccepts = (item: unknown) =>
  validateSync(plainToInstance(CreateTransactionRequestDto, item as object), { whitelist: true, forbidNonWhitelisted: true }).length === 0;

describe('validateBatchItems', () => {
  it('accepts well-formed items, normalising ids and the default amount', () => {
    expect(
      validateBatchItems([
        { tokenId: T.toUpperCase(), toWalletId: A },
        { tokenId: T, fromWalletId: A, toWalletId: B, amount: '7' },
      ]),
    ).toEqual({
      movements: [
        { type: 'nftMint', tokenId: T, fromWalletId: null, toWalletId: A, amount: '1' },
        { type: 'nftTransfer', tokenId: T, fromWalletId: A, toWalletId: B, amount: '7' },
      ],
    });
  });

  it('lists every bad item with the same messages as the single endpoint', () => {
    const result = validateBatchItems([{ tokenId: T, toWalletId: A }, { tokenId: 'x', toWalletId: A }, { tokenId: T }, 'nope']);
    expect(result).toEqual({
      errors: [
        { index: 1, field: 'tokenId', message: 'tokenId must be a UUID' },
        { index: 2, field: 'fromWalletId', message: expect.any(String) },
        { index: 2, field: 'toWalletId', message: expect.any(String) },
        { index: 3, field: 'transactions', message: 'each item must be a JSON object' },
      ],
    });
  });

  it('is never more permissive than the DTO (property test over hostile items)', () => {
    const value = fc.oneof(
      fc.constantFrom(A, T, A.toUpperCase(), '00000000-0000-0000-0000-000000000000', '1', '0', '01', null, undefined, ''),
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant({}),
      fc.constant([A]),
    );
    const item = fc.dictionary(
      fc.constantFrom('tokenId', 'fromWalletId', 'toWalletId', 'amount', 'extra', '__proto__', 'constructor'),
      value,
    );
    fc.assert(
      fc.property(item, (candidate) => {
        const batch = validateBatchItems([candidate]);
        if ('movements' in batch) expect(dtoAccepts(candidate)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
