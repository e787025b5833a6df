import { DomainError } from '../../common/errors/domain-error';
import { parseContractAddressList } from './whitelist.rules';

const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const LOWER = CHECKSUMMED.toLowerCase();

function rejection(inputs: unknown[]): DomainError {
  try {
    parseContractAddressList(inputs);
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a rejection');
}

describe('parseContractAddressList', () => {
  it('accepts lowercase, uppercase hex and EIP-55, returning each address once in lowercase', () => {
    const upper = `0x${LOWER.slice(2).toUpperCase()}`;
    const other = '0x' + '1'.repeat(40);
    expect(parseContractAddressList([CHECKSUMMED, other, LOWER, upper])).toEqual([LOWER, other]);
  });

  it('names every bad entry by its index and accepts none of them', () => {
    const wrongChecksum = CHECKSUMMED.replace('aA', 'Aa');
    const error = rejection([LOWER, 'not-an-address', 42, wrongChecksum, '0x1234']);
    expect(error).toBeInstanceOf(DomainError);
    expect(error.status).toBe(400);
    expect(error.code).toBe('INVALID_ADDRESS');
    expect(error.errors?.map((e) => e.field)).toEqual([
      'contractAddresses[1]',
      'contractAddresses[2]',
      'contractAddresses[3]',
      'contractAddresses[4]',
    ]);
  });

  it('says which entry is wrong when only one is', () => {
    const error = rejection([LOWER, LOWER, LOWER, '0xZZ']);
    expect(error.detail).toContain('contractAddresses[3]');
    expect(error.errors).toEqual([{ field: 'contractAddresses[3]', message: expect.any(String) }]);
  });
});
