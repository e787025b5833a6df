import { DomainError } from '../../../common/errors/domain-error';
import { formatStatsInstant, MAX_STATS_BUCKETS, parseStatsInstant, resolveStatsWindow } from './webhook-stats.rules';

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const NOW = new Date('2026-11-23T10:17:42.123Z');

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseStatsInstant', () => {
  it('reads offsets and keeps microseconds', () => {
    expect(parseStatsInstant('2026-11-22T01:25:42.123456+00:00')).toBe(micros('2026-11-22T01:25:42.123Z') + 456n);
    expect(parseStatsInstant('2026-11-22T01:25:42Z')).toBe(micros('2026-11-22T01:25:42Z'));
    expect(parseStatsInstant('2026-11-22T06:55:42.5+05:30')).toBe(micros('2026-11-22T01:25:42.500Z'));
    expect(parseStatsInstant('2026-11-21T20:25-05:00')).toBe(micros('2026-11-22T01:25:00Z'));
  });

  it('refuses what is not a real instant with an offset', () => {
    for (const text of [
      '',
      'yesterday',
      '2026-11-22',
      '2026-11-22T01:25:42',
      '2026-11-22 01:25:42+00:00',
      '2026-11-22T01:25:42.1234567+00:00',
      '2026-02-30T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T01:60:00Z',
      '2026-11-22T01:25:42+24:00',
      '1969-12-31T23:59:59Z',
      '9999-06-01T00:00:00Z',
      '0000-01-01T00:00:00Z',
    ]) {
      expect([text, parseStatsInstant(text)]).toEqual([text, null]);
    }
  });

  it('formats back in the API form', () => {
    expect(formatStatsInstant(micros('2026-11-22T01:25:42.123Z') + 456n)).toBe('2026-11-22T01:25:42.123456+00:00');
    expect(formatStatsInstant(0n)).toBe('1970-01-01T00:00:00.000000+00:00');
  });
});

describe('resolveStatsWindow', () => {
  it('defaults to the 24 hours before now in hourly buckets, the first and last cut by the window', () => {
    const window = resolveStatsWindow({}, NOW);
    expect(window.until).toBe(micros(NOW.toISOString()));
    expect(window.since).toBe(window.until - 86_400_000_000n);
    expect(window.bucketMs).toBe(3_600_000);
    expect(formatStatsInstant(window.firstBucket)).toBe('2026-11-22T10:00:00.000000+00:00');
    // 10:00 yesterday to 10:00 today inclusive: 25 buckets.
    expect(window.bucketCount).toBe(25);
  });

  it('defaults since to 24 hours before a given until', () => {
    const window = resolveStatsWindow({ until: '2026-11-20T00:00:00+00:00' }, NOW);
    expect(formatStatsInstant(window.since)).toBe('2026-11-19T00:00:00.000000+00:00');
    expect(window.bucketCount).toBe(24);
  });

  it('aligns minute buckets in UTC whatever the offset written', () => {
    const window = resolveStatsWindow({ since: '2026-11-22T06:55:42+05:30', until: '2026-11-22T01:28:00Z', bucket: '1m' }, NOW);
    expect(formatStatsInstant(window.firstBucket)).toBe('2026-11-22T01:25:00.000000+00:00');
    expect(window.bucketCount).toBe(3);
  });

  it('answers a full day of minutes, not more than the bucket limit', () => {
    expect(resolveStatsWindow({ bucket: '1m' }, NOW).bucketCount).toBe(1441);
    const since = '2026-11-22T00:00:00Z';
    expect(resolveStatsWindow({ since, until: '2026-11-23T01:00:00Z', bucket: '1m' }, NOW).bucketCount).toBe(MAX_STATS_BUCKETS);
    const tooMany = refusal(() => resolveStatsWindow({ since, until: '2026-11-23T01:00:00.000001Z', bucket: '1m' }, NOW));
    expect(tooMany).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'bucket' }] });
    expect(tooMany.errors![0].message).toContain('1501 buckets');
  });

  it('refuses since at or after until, and unreadable timestamps naming each field', () => {
    const same = refusal(() => resolveStatsWindow({ since: '2026-11-22T00:00:00Z', until: '2026-11-22T00:00:00Z' }, NOW));
    expect(same).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'until' }] });
    const both = refusal(() => resolveStatsWindow({ since: '2026-02-30T00:00:00Z', until: '2026-11-22T25:00:00Z' }, NOW));
    expect(both.errors!.map((e) => e.field)).toEqual(['since', 'until']);
    const early = refusal(() => resolveStatsWindow({ until: '1970-01-01T01:00:00Z' }, NOW));
    expect(early.errors).toEqual([{ field: 'since', message: 'since must not be before 1970' }]);
  });
});
