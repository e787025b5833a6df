import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

const NAMED = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Reads TRUST_PROXY into the value Express's `trust proxy` setting takes: `none` (or false) trusts
 * no peer, otherwise a comma-separated list of addresses, CIDR ranges and the names loopback,
 * linklocal and uniquelocal. Only a peer in that list may tell the service who the client is
 * through X-Forwarded-For; numbers and `true` (trust any hop count) are refused on purpose.
 * Null when the text is not such a list.
 */
export function parseTrustProxy(text: string): string | false | null {
  const value = text.trim().toLowerCase();
  if (value === 'none' || value === 'false') return false;
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => !NAMED.has(e) && !isAddressOrRange(e))) return null;
  return entries.join(', ');
}

/** Strict forms only (ipaddr.js alone also takes "1" or "0x7f.1" as IPv4 addresses). */
function isAddressOrRange(entry: string): boolean {
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || isIP(address) === 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && ipaddr.isValidCIDR(entry));
}
