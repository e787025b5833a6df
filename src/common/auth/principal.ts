/** Route metadata key holding the access decision of every route. */
export const ACCESS_METADATA = 'access';

export const ROLES = ['read', 'write', 'admin', 'auditor'] as const;
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

/**
 * The roles that open a route guarded by `required` for a request of `method`. An organization's
 * administration pages (`admin` routes) are readable by an `auditor`: every GET of them, and
 * nothing that changes anything. Guard, OpenAPI document and docs/ACCESS.md all ask this one
 * function, so what is published is what is enforced.
 */
export function rolesAccepted(required: Role, method: string): Role[] {
  const accepted = new Set<Role>([required, 'admin']);
  if (required === 'admin' && (method.toUpperCase() === 'GET' || method.toUpperCase() === 'HEAD')) accepted.add('auditor');
  return ROLES.filter((role) => accepted.has(role));
}

/** Whether a key holding `granted` may call a route guarded by `required` with `method`. */
export function mayCall(granted: readonly Role[], required: Role, method: string): boolean {
  const accepted = rolesAccepted(required, method);
  return granted.some((role) => accepted.includes(role));
}
