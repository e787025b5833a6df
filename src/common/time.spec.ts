import { formatDbTimestamp, formatUtc } from './time';

describe('formatUtc', () => {
  it('writes six fractional digits and a +00:00 offset', () => {
    expect(formatUtc(new Date('2026-11-22T01:25:42.123Z'))).toBe('2026-11-22T01:25:42.123000+00:00');
  });

  it('keeps null as null', () => {
    expect(formatUtc(null)).toBeNull();
  });
});

describe('formatDbTimestamp', () => {
  it('keeps the microseconds PostgreSQL returns', () => {
    expect(formatDbTimestamp('2026-11-22 02:07:07.841234+00')).toBe('2026-11-22T02:07:07.841234+00:00');
    expect(formatDbTimestamp('2026-11-22 02:07:07.8+00')).toBe('2026-11-22T02:07:07.800000+00:00');
    expect(formatDbTimestamp('2026-11-22 02:07:07+00')).toBe('2026-11-22T02:07:07.000000+00:00');
  });

  it('converts other offsets through UTC', () => {
    expect(formatDbTimestamp('2026-11-22 03:07:07.5+01')).toBe('2026-11-22T02:07:07.500000+00:00');
    expect(formatDbTimestamp(new Date('2026-11-22T02:07:07.123Z'))).toBe('2026-11-22T02:07:07.123000+00:00');
  });
});
