/**
 * `asOf` of the balances read: an ISO 8601 date-time with seconds (fractions up to microseconds)
 * and an explicit offset (`Z`, `+hh:mm`, `+hhmm`). A `+` sent unencoded in a query string arrives
 * as a space; a space right before the offset is read as that `+`.
 */
const AS_OF = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+\- ]\d{2}:?\d{2})$/;

/** The instant as a PostgreSQL-parsable timestamptz literal (microsecond-exact), or null when not valid. */
export function parseAsOf(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const match = AS_OF.exec(input);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number);
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return null;
  let zone = '+00:00';
  if (offset !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    const [oh, om] = [Number(digits.slice(0, 2)), Number(digits.slice(2))];
    if (oh > 23 || om > 59) return null;
    zone = `${offset[0] === '-' ? '-' : '+'}${digits.slice(0, 2)}:${digits.slice(2)}`;
  }
  return `${year}-${month}-${day}T${hour}:${minute}:${second}.${(fraction ?? '').padEnd(6, '0')}${zone}`;
}
