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
