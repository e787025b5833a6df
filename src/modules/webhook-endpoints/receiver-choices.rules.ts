import { badRequest, FieldError } from '../../common/errors/domain-error';
import { normalizeAddress } from '../../common/evm-address';
import { ContentFilter, filterProblems } from './content-filter.rules';

/**
 * What a receiver chooses to get (docs/WEBHOOKS.md "Choosing what an endpoint receives"): the
 * body kind, a content filter, and a retry schedule of its own. Kept apart from the endpoint's
 * address and transport because the delivery engine reads these per event, not per request.
 */
export const PAYLOAD_KINDS = ['thin', 'full'] as const;
export type PayloadKind = (typeof PAYLOAD_KINDS)[number];

export const MAX_FILTER_CONTRACT_ADDRESSES = 1000;

export const RETRY_SCHEDULE_LIMITS = { minEntries: 1, maxEntries: 20, minSeconds: 1, maxSeconds: 86_400 } as const;

export interface ReceiverChoices {
  /** `thin`: the event's envelope only; `full`: the envelope and `data`, the resource as its GET answers. */
  payload: PayloadKind;
  /** Null: every event of the subscribed types (the contract filter still applies). */
  filter: ContentFilter | null;
  /** Delays in seconds between attempts; null: the service's schedule. */
  retrySchedule: number[] | null;
}

export const DEFAULT_CHOICES: ReceiverChoices = { payload: 'thin', filter: null, retrySchedule: null };

/**
 * A filter as a request gives it: null for none, or a valid filter. Every problem is named at once
 * (`filter.$or[1].action.$foo`) and nothing is stored when there is one.
 */
export function parseContentFilter(input: unknown): ContentFilter | null {
  if (input === null) return null;
  const problems = filterProblems(input, 'filter');
  if (problems.length > 0) {
    const detail = problems.length === 1 ? `${problems[0].field} ${problems[0].message}` : `The filter has ${problems.length} problems.`;
    throw badRequest('VALIDATION_FAILED', detail, problems);
  }
  return input as ContentFilter;
}

/**
 * The contract filter of a request: lowercase, without repeats, sorted (so the same set always
 * reads and compares the same). Null or absent means no filter. Every bad entry is named at once
 * (`filters.contractAddresses[3]`); a mixed-case address with a wrong EIP-55 checksum is refused
 * like any other typo (see common/evm-address.ts).
 */
export function parseContractAddressFilter(
  inputs: readonly unknown[] | null | undefined,
  field = 'filters.contractAddresses',
): string[] | null {
  if (inputs === null || inputs === undefined) return null;
  const errors: FieldError[] = [];
  const unique = new Set<string>();
  inputs.forEach((input, index) => {
    const normalized = typeof input === 'string' ? normalizeAddress(input) : null;
    if (normalized === null) {
      errors.push({
        field: `${field}[${index}]`,
        message: 'must be a 0x-prefixed 20-byte hex address; mixed case must be a valid EIP-55 checksum',
      });
    } else {
      unique.add(normalized);
    }
  });
  if (errors.length > 0) {
    const detail =
      errors.length === 1
        ? `${errors[0].field} is not a valid EVM address (or its EIP-55 checksum is wrong).`
        : `${errors.length} entries of ${field} are not valid EVM addresses.`;
    throw badRequest('INVALID_ADDRESS', detail, errors);
  }
  return [...unique].sort();
}

/** The choices stored on an endpoint row (columns `payload`, `filter`, `retry_schedule`). */
export function storedChoices(row: { payload: string; filter: ContentFilter | null; retrySchedule: number[] | null }): ReceiverChoices {
  return { payload: row.payload === 'full' ? 'full' : 'thin', filter: row.filter, retrySchedule: copy(row.retrySchedule) };
}

function copy(schedule: readonly number[] | null): number[] | null {
  return schedule === null ? null : [...schedule];
}
