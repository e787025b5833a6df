/**
 * Content filters of webhook endpoints: a JSON object an event must match to become a webhook to
 * the endpoint, in the JSON-match syntax of Convoy and Hookdeck Outpost. The event it is matched
 * against is `{webhookType, resourceType, action, organizationId, resourceId, changes, data}`.
 *
 * A plain key descends into the event (`{"data": {"amount": "5"}}`); a key starting with `$` is an
 * operator applied to the value at its level (`{"data": {"count": {"$gt": 5}}}`), and
 * `$or`/`$and`/`$not` combine filters matched at that same level. Every key of an object must hold.
 */
export type ContentFilter = Record<string, unknown>;

export interface FilterProblem {
  field: string;
  message: string;
}

/** Bounds of one filter, so a filter costs little to store and to match for every event. */
export const FILTER_LIMITS = { maxDepth: 10, maxNodes: 100, maxBytes: 8192 };

const OPERATORS = ['$eq', '$neq', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exist', '$startsWith', '$or', '$and', '$not'];

const DOLLAR = 0x24;
const DASH = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const COLON = 0x3a;
const ZERO = 0x30;
const UPPER_T = 0x54;
const UPPER_Z = 0x5a;

const LITERAL_MESSAGE = 'must be a string, number, boolean, null or an array of those';
const SCALAR_ELEMENT_MESSAGE = 'must be a string, number, boolean or null';
const FILTER_MESSAGE = 'must be a filter (a JSON object)';
const ORDER_MESSAGE =
  'must be a number or an ISO 8601 date-time with seconds and an offset, such as 2026-11-22T01:25:42Z ' +
  '(compare decimal strings with $eq or $in)';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

// ---------------------------------------------------------------------------------------------
// Date-times. Parsed by hand from character codes: matching compares them for every event and
// endpoint, and a Date would both allocate and drop digits past the millisecond.

/** Two decimal digits at `at`, or NaN when either is not a digit. */
function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - ZERO;
  const b = s.charCodeAt(at + 1) - ZERO;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Whole seconds since the epoch of `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`, or NaN when the
 * string is not such a date-time. The fraction (any number of digits) is compared separately.
 */
function epochSeconds(s: string): number {
  const n = s.length;
  if (n < 20 || s.charCodeAt(4) !== DASH || s.charCodeAt(7) !== DASH || s.charCodeAt(10) !== UPPER_T) return NaN;
  if (s.charCodeAt(13) !== COLON || s.charCodeAt(16) !== COLON) return NaN;
  const year = twoDigits(s, 0) * 100 + twoDigits(s, 2);
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  const hour = twoDigits(s, 11);
  const minute = twoDigits(s, 14);
  const second = twoDigits(s, 17);
  let i = 19;
  if (s.charCodeAt(i) === DOT) {
    const start = ++i;
    while (i < n && s.charCodeAt(i) >= ZERO && s.charCodeAt(i) <= ZERO + 9) i++;
    if (i === start) return NaN;
  }
  let offsetSeconds = 0;
  const sign = s.charCodeAt(i);
  if (sign === UPPER_Z && i + 1 === n) offsetSeconds = 0;
  else if ((sign === PLUS || sign === DASH) && i + 6 === n && s.charCodeAt(i + 3) === COLON) {
    const offsetHours = twoDigits(s, i + 1);
    const offsetMinutes = twoDigits(s, i + 4);
    if (!(offsetHours <= 23 && offsetMinutes <= 59)) return NaN;
    offsetSeconds = (sign === PLUS ? 1 : -1) * (offsetHours * 3600 + offsetMinutes * 60);
  } else return NaN;
  // Written so that NaN (a non-digit) fails every test.
  if (!(month >= 1 && month <= 12 && day >= 1 && hour <= 23 && minute <= 59 && second <= 59)) return NaN;
  if (!(year >= 0) || day > daysInMonth(year, month)) return NaN;
  return daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds;
}

/** Where the fraction's digits of a valid date-time end (they start at 20; none: 20). */
function fractionEnd(s: string): number {
  if (s.charCodeAt(19) !== DOT) return 20;
  return s.charCodeAt(s.length - 1) === UPPER_Z ? s.length - 1 : s.length - 6;
}

/** Sign of `a - b` as instants, exact to the last fractional digit; NaN when either is not a date-time. */
function compareDateTimes(a: string, b: string): number {
  const secondsA = epochSeconds(a);
  const secondsB = epochSeconds(b);
  // Unequal also when either is NaN (not a date-time), which then compares neither way.
  if (secondsA !== secondsB) return secondsA < secondsB ? -1 : secondsA > secondsB ? 1 : NaN;
  const endA = fractionEnd(a);
  const endB = fractionEnd(b);
  const digits = Math.max(endA, endB) - 20;
  for (let k = 0; k < digits; k++) {
    const digitA = 20 + k < endA ? a.charCodeAt(20 + k) : ZERO;
    const digitB = 20 + k < endB ? b.charCodeAt(20 + k) : ZERO;
    if (digitA !== digitB) return digitA < digitB ? -1 : 1;
  }
  return 0;
}

function isDateTime(value: unknown): boolean {
  return typeof value === 'string' && !Number.isNaN(epochSeconds(value));
}

// ---------------------------------------------------------------------------------------------
// Matching. Allocation-free: no key lists, no closures, no strings built.

/** A literal: equal (strict JSON types); a scalar also matches an element of an array field. */
function literalMatches(literal: unknown, value: unknown): boolean {
  if (Array.isArray(literal)) {
    if (!Array.isArray(value) || value.length !== literal.length) return false;
    for (let i = 0; i < literal.length; i++) if (value[i] !== literal[i]) return false;
    return true;
  }
  if (value === literal) return true;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) if (value[i] === literal) return true;
  return false;
}

function inList(list: unknown, value: unknown): boolean {
  if (!Array.isArray(list)) return false;
  for (let i = 0; i < list.length; i++) if (literalMatches(list[i], value)) return true;
  return false;
}

/** Sign of `value - operand` for $gt/$gte/$lt/$lte, NaN when they cannot be compared. */
function order(operand: unknown, value: unknown): number {
  if (typeof operand === 'number') {
    if (typeof value !== 'number') return NaN;
    return value < operand ? -1 : value > operand ? 1 : value === operand ? 0 : NaN;
  }
  if (typeof operand === 'string' && typeof value === 'string') return compareDateTimes(value, operand);
  return NaN;
}

function operatorHolds(operator: string, operand: unknown, value: unknown, present: boolean): boolean {
  switch (operator) {
    case '$eq':
      return present && literalMatches(operand, value);
    case '$neq':
      return !(present && literalMatches(operand, value));
    // A NaN order (not comparable, or missing) fails all four.
    case '$gt':
      return present && order(operand, value) > 0;
    case '$gte':
      return present && order(operand, value) >= 0;
    case '$lt':
      return present && order(operand, value) < 0;
    case '$lte':
      return present && order(operand, value) <= 0;
    case '$in':
      return present && inList(operand, value);
    case '$nin':
      return !(present && inList(operand, value));
    case '$exist':
      return operand === true ? present : operand === false && !present;
    case '$startsWith':
      return present && typeof value === 'string' && typeof operand === 'string' && value.startsWith(operand);
    case '$or':
      if (!Array.isArray(operand)) return false;
      for (let i = 0; i < operand.length; i++)
        if (isObject(operand[i]) && matchesAt(operand[i] as ContentFilter, value, present)) return true;
      return false;
    case '$and':
      if (!Array.isArray(operand)) return false;
      for (let i = 0; i < operand.length; i++)
        if (!isObject(operand[i]) || !matchesAt(operand[i] as ContentFilter, value, present)) return false;
      return true;
    case '$not':
      return isObject(operand) && !matchesAt(operand, value, present);
    default:
      return false;
  }
}

/** Whether every key of `filter` holds for `value` (`present`: whether the field exists at all). */
function matchesAt(filter: ContentFilter, value: unknown, present: boolean): boolean {
  for (const key in filter) {
    if (!Object.hasOwn(filter, key)) continue;
    const condition = filter[key];
    if (key.charCodeAt(0) === DOLLAR) {
      if (!operatorHolds(key, condition, value, present)) return false;
      continue;
    }
    // Below a missing field or one that is not an object, every key is missing.
    const child = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    const childPresent = child !== undefined;
    const holds = isObject(condition) ? matchesAt(condition, child, childPresent) : childPresent && literalMatches(condition, child);
    if (!holds) return false;
  }
  return true;
}

/** Whether a VALID filter matches an event object. Must never throw on any event input. */
export function filterMatches(filter: ContentFilter, event: Record<string, unknown>): boolean {
  try {
    return matchesAt(filter, event, true);
  } catch {
    // Only an event built in code can throw here (a getter, a proxy): the fan-out delivers the
    // other endpoints' webhooks regardless, and this endpoint's filter has not been met.
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Checking a filter as a user gave it.

/**
 * How many of `budget` nodes (object keys plus array elements) are left after counting `value`;
 * negative once it is spent, where counting stops, so a huge filter costs no more than a small one.
 */
function nodesLeft(value: unknown, budget: number): number {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && budget >= 0; i++) budget = nodesLeft(value[i], budget - 1);
  } else if (isObject(value)) {
    for (const key in value) {
      if (budget < 0) break;
      if (Object.hasOwn(value, key)) budget = nodesLeft(value[key], budget - 1);
    }
  }
  return budget;
}

function compactJsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  } catch {
    // A value JSON cannot hold (a bigint): its own problem is named by the walk.
    return 0;
  }
}

/** Problems of an array whose elements must all be scalars, each named by its index. */
function scalarElementProblems(array: unknown[], path: string, problems: FilterProblem[]): void {
  for (let i = 0; i < array.length; i++) {
    if (!isScalar(array[i])) problems.push({ field: `${path}[${i}]`, message: SCALAR_ELEMENT_MESSAGE });
  }
}

function literalProblems(literal: unknown, path: string, problems: FilterProblem[], message = LITERAL_MESSAGE): void {
  if (Array.isArray(literal)) scalarElementProblems(literal, path, problems);
  else if (!isScalar(literal)) problems.push({ field: path, message });
}

function operatorProblems(operator: string, operand: unknown, path: string, depth: number, problems: FilterProblem[]): void {
  switch (operator) {
    case '$eq':
    case '$neq':
      return literalProblems(operand, path, problems);
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (!((typeof operand === 'number' && Number.isFinite(operand)) || isDateTime(operand)))
        problems.push({ field: path, message: ORDER_MESSAGE });
      return;
    case '$in':
    case '$nin':
      if (Array.isArray(operand)) scalarElementProblems(operand, path, problems);
      else problems.push({ field: path, message: 'must be an array of strings, numbers, booleans or null' });
      return;
    case '$exist':
      if (typeof operand !== 'boolean') problems.push({ field: path, message: 'must be true or false' });
      return;
    case '$startsWith':
      if (typeof operand !== 'string') problems.push({ field: path, message: 'must be a string' });
      return;
    case '$or':
    case '$and':
      if (!Array.isArray(operand) || operand.length === 0) {
        problems.push({ field: path, message: 'must be a non-empty array of filters (JSON objects)' });
        return;
      }
      operand.forEach((filter, i) => {
        if (isObject(filter)) objectProblems(filter, `${path}[${i}]`, depth, problems);
        else problems.push({ field: `${path}[${i}]`, message: FILTER_MESSAGE });
      });
      return;
    case '$not':
      if (isObject(operand)) objectProblems(operand, path, depth, problems);
      else problems.push({ field: path, message: FILTER_MESSAGE });
      return;
    default:
      problems.push({ field: path, message: `${operator} is not an operator; use one of ${OPERATORS.join(', ')}` });
  }
}

/** Problems of the keys of `filter` at `path`, whose keys sit `depth + 1` keys deep. */
function objectProblems(filter: Record<string, unknown>, path: string, depth: number, problems: FilterProblem[]): void {
  for (const key of Object.keys(filter)) {
    const keyPath = `${path}.${key}`;
    const value = filter[key];
    if (depth + 1 > FILTER_LIMITS.maxDepth) {
      problems.push({ field: keyPath, message: `nests too deep: a filter may have at most ${FILTER_LIMITS.maxDepth} keys along one path` });
    } else if (key.charCodeAt(0) === DOLLAR) {
      operatorProblems(key, value, keyPath, depth + 1, problems);
    } else if (isObject(value)) {
      objectProblems(value, keyPath, depth + 1, problems);
    } else {
      literalProblems(value, keyPath, problems, `${LITERAL_MESSAGE}, or an object of conditions`);
    }
  }
}

/**
 * Problems of a filter as given by a user; [] when valid. `root` names the field ('filter').
 * Null is no filter, hence valid. The size limits are checked first, and alone when they fail.
 */
export function filterProblems(filter: unknown, root = 'filter'): FilterProblem[] {
  if (filter === null) return [];
  if (!isObject(filter)) return [{ field: root, message: 'must be a JSON object of conditions, or null for no filter' }];
  if (nodesLeft(filter, FILTER_LIMITS.maxNodes) < 0) {
    return [{ field: root, message: `must have at most ${FILTER_LIMITS.maxNodes} keys and array elements in all` }];
  }
  if (compactJsonBytes(filter) > FILTER_LIMITS.maxBytes) {
    return [{ field: root, message: `must be at most ${FILTER_LIMITS.maxBytes} bytes as compact JSON` }];
  }
  const problems: FilterProblem[] = [];
  objectProblems(filter, root, 0, problems);
  return problems;
}
