import { isTransferCursor, parseTransferFilters } from './wallet-transfers.rules';

describe('activity feed filters', () => {
  it('reads every filter', () => {
    expect(
      parseTransferFilters({
        types: 'nftMint,nftDeposit,nftMint',
        chainId: '31337',
        since: '2026-11-25T10:00:00+02:00',
        until: '2026-11-26T10:00:00.5Z',
        status: 'reverted',
      }),
    ).toEqual({
      filters: {
        types: ['nftMint', 'nftDeposit'],
        chainId: 31337,
        since: '2026-11-25T10:00:00.000000+02:00',
        until: '2026-11-26T10:00:00.500000+00:00',
        status: 'reverted',
      },
    });
  });

  it('leaves absent filters open', () => {
    expect(parseTransferFilters({})).toEqual({ filters: { types: null, chainId: null, since: null, until: null, status: null } });
  });

  it.each([
    ['types', { types: '' }],
    ['types', { types: 'nftMint,' }],
    ['types', { types: 'nftSwap' }],
    ['types', { types: ['nftMint', 'nftBurn'] }],
    ['chainId', { chainId: '1.5' }],
    ['chainId', { chainId: '-1' }],
    ['chainId', { chainId: 'abc' }],
    ['since', { since: '2026-11-25T10:00:00' }],
    ['since', { since: '2026-11-25' }],
    ['until', { until: '2026-02-30T10:00:00+00:00' }],
    ['status', { status: 'pending' }],
  ])('refuses a malformed %s', (field, input) => {
    const result = parseTransferFilters(input);
    expect('errors' in result && result.errors.map((e) => e.field)).toEqual([field]);
  });

  it('accepts only cursors the feed writes', () => {
    expect(isTransferCursor('2026-11-25T10:00:00.123456+00:00')).toBe(true);
    expect(isTransferCursor('2026-11-25T10:00:00+00:00')).toBe(false);
    expect(isTransferCursor('2026-13-25T10:00:00.123456+00:00')).toBe(false);
    expect(isTransferCursor("'; drop table x")).toBe(false);
  });
});
