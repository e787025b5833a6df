/**
 * Formats a timestamp as the contract requires: ISO 8601, six fractional digits and a numeric
 * offset (`2026-11-22T01:25:42.123000+00:00`), never `Z`.
 */
export function formatUtc(date: Date): string;
export function formatUtc(date: Date | null | undefined): string | null;
export function formatUtc(date: Date | null | undefined): string | null {
  if (!date) return null;
  const iso = date.toISOString(); // 2026-11-22T01:25:42.123Z
  return `${iso.slice(0, 23)}000+00:00`;
}

const PG_UTC_TIMESTAMP = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(?:\+00(?::?00)?|Z)$/;

/**
 * Formats a timestamp read by a raw query. PostgreSQL returns timestamptz as text with full
 * microseconds; keeping them (rather than going through a millisecond Date) makes createdAtUtc
 * as precise as the database.
 */
export function formatDbTimestamp(value: string | Date): string {
  if (value instanceof Date) return formatUtc(value);
  const match = PG_UTC_TIMESTAMP.exec(value);
  if (!match) return formatUtc(new Date(value));
  return `${match[1]}T${match[2]}.${(match[3] ?? '').padEnd(6, '0')}+00:00`;
}
