import { formatUtc } from './time';

describe('formatUtc', () => {
  it('writes six fractional digits and a +00:00 offset', () => {
    expect(formatUtc(new Date('2026-11-22T01:25:42.123Z'))).toBe('2026-11-22T01:25:42.123000+00:00');
  });

  it('keeps null as null', () => {
    expect(formatUtc(null)).toBeNull();
  });
});
