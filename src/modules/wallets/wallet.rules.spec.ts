import { DomainError } from '../../common/errors/domain-error';
import { parseWalletAddress } from './wallet.rules';

describe('wallet address', () => {
  it('accepts an address in any accepted form, stored lowercase', () => {
    expect(parseWalletAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBe('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
    expect(parseWalletAddress('0x0000000000000000000000000000000000000001')).toBe('0x0000000000000000000000000000000000000001');
  });

  it('refuses the zero address with a 400 naming the field', () => {
    try {
      parseWalletAddress('0x0000000000000000000000000000000000000000');
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).status).toBe(400);
      expect((error as DomainError).code).toBe('INVALID_ADDRESS');
      expect((error as DomainError).errors).toEqual([{ field: 'address', message: expect.stringContaining('zero address') }]);
    }
  });

  it('still refuses what is not an address', () => {
    expect(() => parseWalletAddress('0x00')).toThrow(DomainError);
  });
});
