import type { ApiKeyPrincipal } from '../auth/principal';

/**
 * How the rate limiter learns whose key a request carries, before the route's own guards run:
 * only a valid key earns the per-key limit, so made-up or revoked keys count against the IP.
 * Provided by the organizations module (its lookups are cached, so the guard's second look is
 * free).
 */
export abstract class ApiKeyLookup {
  abstract authenticate(key: string): Promise<ApiKeyPrincipal | null>;
}
