import { parseAsOf } from './as-of.rules';

describe('asOf', () => {
  it('accepts ISO 8601 date-times with an offset, to the microsecond', () => {
    expect(parseAsOf('2026-11-25T10:00:00Z')).toBe('2026-11-25T10:00:00.000000+00:00');
    expect(parseAsOf('2026-11-25T10:00:00.123456+01:00')).toBe('2026-11-25T10:00:00.123456+01:00');
    expect(parseAsOf('2026-11-25T10:00:00.5-0330')).toBe('2026-11-25T10:00:00.500000-03:30');
    expect(parseAsOf('2024-02-29T23:59:59+00:00')).toBe('2024-02-29T23:59:59.000000+00:00');
  });

  it('reads an unencoded + (a space in a query string) before the offset as +', () => {
    expect(parseAsOf('2026-11-25T10:00:00 02:00')).toBe('2026-11-25T10:00:00.000000+02:00');
  });

  it('refuses missing offsets, impossible dates and other shapes', () => {
    for (const bad of [
      '2026-11-25T10:00:00',
      '2026-11-25',
      '2026-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-25T24:00:00Z',
      '2026-11-25T10:60:00Z',
      '2026-11-25T10:00:00+24:00',
      '2026-11-25T10:00:00.1234567Z',
      '1764064800',
      'yesterday',
      '',
      undefined,
      ['2026-11-25T10:00:00Z'],
    ]) {
      expect(parseAsOf(bad)).toBeNull();
    }
  });
});
