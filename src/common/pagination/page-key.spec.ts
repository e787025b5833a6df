import { DomainError } from '../errors/domain-error';
import { decodePageKey, encodePageKey } from './page-key';

describe('page keys', () => {
  const id = '0193a6c2-7d1e-7c3a-9f10-0a1b2c3d4e5f';

  it('round-trips the sort key of the last item', () => {
    expect(decodePageKey(encodePageKey([id]), ['uuid'])).toEqual([id]);
    expect(decodePageKey(encodePageKey(['0xabc', 7]), ['string', 'number'])).toEqual(['0xabc', 7]);
  });

  it.each([
    ['not base64url', '***'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['wrong arity', encodePageKey([id, id])],
    ['not a uuid', encodePageKey(['abc'])],
    ['too long', 'a'.repeat(2000)],
  ])('rejects a key that is %s with a 400 INVALID_PAGE_KEY', (_label, key) => {
    try {
      decodePageKey(key, ['uuid']);
      throw new Error('expected a rejection');
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).status).toBe(400);
      expect((error as DomainError).code).toBe('INVALID_PAGE_KEY');
    }
  });
});
