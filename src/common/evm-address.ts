import { getAddress } from 'viem';
import { badRequest } from './errors/domain-error';

/** The shape of an EVM address as the OpenAPI document gives it (`pattern`); the checksum is checked apart. */
export const EVM_ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
const HEX_ADDRESS = new RegExp(EVM_ADDRESS_PATTERN);

/**
 * Accepts an EVM address all-lowercase, all-uppercase hex, or in valid EIP-55 mixed case, and
 * returns it lowercase (the stored form). A mixed-case address with a wrong checksum is almost
 * always a typo, so it is refused rather than silently accepted. Returns null when not accepted.
 */
export function normalizeAddress(input: string): string | null {
  if (typeof input !== 'string' || !HEX_ADDRESS.test(input)) return null;
  const body = input.slice(2);
  const lower = `0x${body.toLowerCase()}`;
  if (body === body.toLowerCase() || body === body.toUpperCase()) return lower;
  return getAddress(lower) === input ? lower : null;
}

/** Like normalizeAddress, but a refusal is a 400 naming the field. */
export function parseAddress(input: string, field: string): string {
  const normalized = normalizeAddress(input);
  if (normalized === null) {
    throw badRequest('INVALID_ADDRESS', `${field} is not a valid EVM address (or its EIP-55 checksum is wrong).`, [
      { field, message: 'must be a 0x-prefixed 20-byte hex address; mixed case must be a valid EIP-55 checksum' },
    ]);
  }
  return normalized;
}

/** The EIP-55 checksum form every response uses. */
export function toChecksumAddress(stored: string): string {
  return getAddress(stored);
}
