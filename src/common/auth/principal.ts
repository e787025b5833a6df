/** Route metadata key holding the access decision of every route. */
export const ACCESS_METADATA = 'access';

export const ROLES = ['read', 'write', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling: an organization's API key. The organization is always the key's own. */
export interface ApiKeyPrincipal {
  kind: 'apiKey';
  organizationId: string;
  apiKeyId: string;
  keyPrefix: string;
  roles: Role[];
}

export interface OperatorPrincipal {
  kind: 'operator';
}

export type Principal = ApiKeyPrincipal | OperatorPrincipal;

/** `admin` implies `read` and `write`. */
export function hasRole(granted: readonly Role[], required: Role): boolean {
  return granted.includes('admin') || granted.includes(required);
}
