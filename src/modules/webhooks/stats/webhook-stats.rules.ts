import { FieldError, validationFailed } from '../../../common/errors/domain-error';

/** Bucket sizes of the delivery statistics, in milliseconds. */
export const STATS_BUCKET_SIZES = { '1m': 60_000, '1h': 3_600_000 } as const;
export type StatsBucketSize = keyof typeof STATS_BUCKET_SIZES;
export const STATS_BUCKET_NAMES = Object.keys(STATS_BUCKET_SIZES) as StatsBucketSize[];
export const DEFAULT_STATS_BUCKET: StatsBucketSize = '1h';
/** The window when `since` is not given: the 24 hours before `until`. */
export const DEFAULT_STATS_SPAN_MS = 24 * 3_600_000;
/**
 * At most this many buckets per answer: a day of minutes (1,440, 1,441 when unaligned) fits, and
 * neither the query (one index range per bucket) nor the body can be made arbitrarily large.
 */
export const MAX_STATS_BUCKETS = 1500;

/**
 * An ISO 8601 date and time with `Z` or a numeric offset, to the microsecond; seconds optional.
 * A time without offset is refused rather than guessed in the server's zone.
 */
export const STATS_TIMESTAMP_PATTERN = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,6}))?)?(Z|[+-]\d\d:\d\d)$/i;
export const STATS_TIMESTAMP_MESSAGE = 'must be an ISO 8601 date and time with an offset, e.g. 2026-11-22T01:00:00+00:00';

const MICROS_PER_MS = 1000n;
/** Instants outside these bounds are refused: no webhook predates 1970, and the formats below stay 4-digit years. */
const EARLIEST_MICROS = 0n;
const LATEST_MICROS = BigInt(Date.UTC(9999, 0, 1)) * MICROS_PER_MS;

/**
 * Microseconds since 1970-01-01T00:00Z (PostgreSQL's precision), or null when `text` is not a
 * real instant of that form (a 30 February or a 25th hour included).
 */
export function parseStatsInstant(text: string): bigint | null {
  const match = STATS_TIMESTAMP_PATTERN.exec(text);
  if (!match) return null;
  const [, y, mo, d, h, mi, s = '0', fraction = '', offset] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(wall);
  const real =
    check.getUTCFullYear() === year &&
    check.getUTCMonth() === month - 1 &&
    check.getUTCDate() === day &&
    check.getUTCHours() === hour &&
    check.getUTCMinutes() === minute &&
    check.getUTCSeconds() === second;
  if (!real) return null;
  let offsetMs = 0;
  if (offset.toUpperCase() !== 'Z') {
    const offsetHours = Number(offset.slice(1, 3));
    const offsetMinutes = Number(offset.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) return null;
    offsetMs = (offset.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  const micros = BigInt(wall - offsetMs) * MICROS_PER_MS + BigInt(fraction.padEnd(6, '0'));
  return micros >= EARLIEST_MICROS && micros < LATEST_MICROS ? micros : null;
}

/** The contract's form of an instant, microseconds kept: `2026-11-22T01:25:42.123456+00:00`. */
export function formatStatsInstant(micros: bigint): string {
  const seconds = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0');
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${fraction}+00:00`;
}

/** What the statistics are asked for, as the query string carries it (already type-checked). */
export interface StatsRequest {
  since?: string;
  until?: string;
  bucket?: StatsBucketSize;
}

/**
 * The window and buckets to report: webhooks created in [since, until), in buckets aligned to
 * their size in UTC, from the one holding `since` to the one holding the last instant before
 * `until` (the first and last may be cut by the window).
 */
export interface StatsWindow {
  since: bigint;
  until: bigint;
  bucketMs: number;
  /** Start of the first bucket, in microseconds. */
  firstBucket: bigint;
  bucketCount: number;
}

/** Resolves defaults and refuses, as problem details naming the field, a window that cannot be answered. */
export function resolveStatsWindow(request: StatsRequest, now: Date): StatsWindow {
  const errors: FieldError[] = [];
  const parse = (field: 'since' | 'until', text: string | undefined): bigint | null | undefined => {
    if (text === undefined) return undefined;
    const micros = parseStatsInstant(text);
    if (micros === null) errors.push({ field, message: `${STATS_TIMESTAMP_MESSAGE}, between 1970 and 9998` });
    return micros;
  };
  const givenSince = parse('since', request.since);
  const givenUntil = parse('until', request.until);
  if (errors.length > 0) throw validationFailed(errors);

  const until = givenUntil ?? BigInt(now.getTime()) * MICROS_PER_MS;
  const since = givenSince ?? until - BigInt(DEFAULT_STATS_SPAN_MS) * MICROS_PER_MS;
  if (since >= until) throw validationFailed([{ field: 'until', message: 'until must be later than since' }]);
  if (since < EARLIEST_MICROS) throw validationFailed([{ field: 'since', message: 'since must not be before 1970' }]);

  const bucketMs = STATS_BUCKET_SIZES[request.bucket ?? DEFAULT_STATS_BUCKET];
  const width = BigInt(bucketMs) * MICROS_PER_MS;
  const firstBucket = since - (since % width);
  const bucketCount = Number((until - firstBucket + width - 1n) / width);
  if (bucketCount > MAX_STATS_BUCKETS) {
    throw validationFailed([
      {
        field: 'bucket',
        message: `the window holds ${bucketCount} buckets of ${request.bucket ?? DEFAULT_STATS_BUCKET}; at most ${MAX_STATS_BUCKETS} are answered (narrow since/until or use a larger bucket)`,
      },
    ]);
  }
  return { since, until, bucketMs, firstBucket, bucketCount };
}
