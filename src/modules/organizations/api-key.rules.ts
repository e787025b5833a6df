import { createHash, randomBytes } from 'node:crypto';
import { Role, ROLES } from '../../common/auth/principal';

const KEY_MARKER = 'nftw_';
/** Characters of the key kept in clear so people can tell their keys apart. */
const PREFIX_LENGTH = KEY_MARKER.length + 8;

export interface GeneratedApiKey {
  key: string;
  keyPrefix: string;
  keyHash: string;
}

/** 32 random bytes (256 bits), base64url: shown once to the caller, stored only as a hash. */
export function generateApiKey(): GeneratedApiKey {
  const key = KEY_MARKER + randomBytes(32).toString('base64url');
  return { key, keyPrefix: key.slice(0, PREFIX_LENGTH), keyHash: hashApiKey(key) };
}

/** The shape generateApiKey produces: the marker, then 32 bytes in base64url (43 characters). */
const API_KEY_SHAPE = /^nftw_[A-Za-z0-9_-]{43}$/;

/** False for any string generateApiKey cannot have produced (it cannot be a key, whatever the database holds). */
export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_SHAPE.test(key);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Unique roles in a stable order, so two keys with the same grants look the same. */
export function normalizeRoles(roles: readonly Role[]): Role[] {
  return ROLES.filter((role) => roles.includes(role));
}
