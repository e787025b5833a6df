import { DomainError } from './errors/domain-error';
import { normalizeAddress, parseAddress, toChecksumAddress } from './evm-address';

const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const LOWER = CHECKSUMMED.toLowerCase();

describe('EVM addresses', () => {
  it('accepts lowercase, uppercase hex and valid EIP-55, storing lowercase', () => {
    expect(normalizeAddress(LOWER)).toBe(LOWER);
    expect(normalizeAddress(`0x${LOWER.slice(2).toUpperCase()}`)).toBe(LOWER);
    expect(normalizeAddress(CHECKSUMMED)).toBe(LOWER);
  });

  it('refuses a mixed-case address with a wrong checksum', () => {
    const wrong = CHECKSUMMED.slice(0, -1) + 'D';
    expect(normalizeAddress(wrong)).toBeNull();
    expect(() => parseAddress(wrong, 'contractAddress')).toThrow(DomainError);
  });

  it.each(['', '0x', '5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', `${LOWER}00`, '0xZZaeb6053f3e94c9b9a09f33669435e7ef1beaed', ` ${LOWER}`])(
    'refuses %p',
    (input) => {
      expect(normalizeAddress(input)).toBeNull();
    },
  );

  it('returns addresses in checksum form', () => {
    expect(toChecksumAddress(LOWER)).toBe(CHECKSUMMED);
  });

  it('reports a 400 INVALID_ADDRESS naming the field', () => {
    try {
      parseAddress('nope', 'contractAddress');
      throw new Error('expected a rejection');
    } catch (error) {
      expect((error as DomainError).status).toBe(400);
      expect((error as DomainError).code).toBe('INVALID_ADDRESS');
      expect((error as DomainError).errors?.[0].field).toBe('contractAddress');
    }
  });
});
