import type { FieldError } from '../../common/errors/domain-error';
import { parseAsOf } from './as-of.rules';
import { TRANSACTION_TYPES, TransactionType } from './transaction.rules';

/** The filters of a wallet's activity feed, checked and normalised (every one combines with AND). */
export interface TransferFilters {
  types: TransactionType[] | null;
  chainId: number | null;
  /** Inclusive lower bound on createdAtUtc, as a PostgreSQL timestamptz literal. */
  since: string | null;
  /** Exclusive upper bound on createdAtUtc. */
  until: string | null;
  status: 'confirmed' | 'reverted' | null;
}

export interface TransferFilterInput {
  types?: unknown;
  chainId?: unknown;
  since?: unknown;
  until?: unknown;
  status?: unknown;
}

const STATUSES = ['confirmed', 'reverted'] as const;
const INTEGER = /^(0|[1-9]\d{0,15})$/;

/**
 * Reads the feed's query filters: `types` a comma list (at least one, no unknown value), `chainId`
 * a non-negative integer, `since`/`until` ISO 8601 date-times with an offset, `status` one of
 * confirmed|reverted. Returns the filters, or every malformed field with why.
 */
export function parseTransferFilters(input: TransferFilterInput): { filters: TransferFilters } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const filters: TransferFilters = { types: null, chainId: null, since: null, until: null, status: null };

  if (input.types !== undefined) {
    const values = typeof input.types === 'string' ? input.types.split(',').map((v) => v.trim()) : null;
    if (values === null || values.length === 0 || values.some((v) => !(TRANSACTION_TYPES as readonly string[]).includes(v))) {
      errors.push({ field: 'types', message: `must be a comma-separated list of ${TRANSACTION_TYPES.join(', ')} (at least one)` });
    } else {
      filters.types = [...new Set(values)] as TransactionType[];
    }
  }
  if (input.chainId !== undefined) {
    if (typeof input.chainId !== 'string' || !INTEGER.test(input.chainId) || !Number.isSafeInteger(Number(input.chainId))) {
      errors.push({ field: 'chainId', message: 'must be a non-negative integer' });
    } else {
      filters.chainId = Number(input.chainId);
    }
  }
  for (const field of ['since', 'until'] as const) {
    if (input[field] === undefined) continue;
    const instant = parseAsOf(input[field]);
    if (instant === null) {
      errors.push({ field, message: 'must be an ISO 8601 date-time with seconds and an offset (Z or ±hh:mm); encode + as %2B' });
    } else {
      filters[field] = instant;
    }
  }
  if (input.status !== undefined) {
    if (typeof input.status !== 'string' || !(STATUSES as readonly string[]).includes(input.status)) {
      errors.push({ field: 'status', message: 'must be confirmed or reverted' });
    } else {
      filters.status = input.status as TransferFilters['status'];
    }
  }
  return errors.length > 0 ? { errors } : { filters };
}

/** The keyset position of the last item served: its createdAt (microseconds, UTC) and id. */
export interface TransferCursor {
  createdAt: string;
  id: string;
}

const CURSOR_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

/** Whether a decoded page key holds a cursor this feed could have written. */
export function isTransferCursor(createdAt: string): boolean {
  return CURSOR_TIME.test(createdAt) && parseAsOf(createdAt) !== null;
}
