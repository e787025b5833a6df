import { LRUCache } from 'lru-cache';
import type { ApiKeyPrincipal } from '../../common/auth/principal';

/** Bounded so that a flood of made-up keys cannot grow memory without limit. */
export const MAX_CACHED_KEYS = 10_000;
/**
 * How long "no such key" is remembered: long enough that repeating a made-up or revoked key
 * costs no database lookup, short enough not to matter for any real key (a key is random and
 * shown only once, so nobody presents it before it exists).
 */
export const UNKNOWN_KEY_TTL_MS = 1000;

/**
 * Key lookups by key hash, for a short time. The TTL of a known key (at most 5 s, validated in
 * config) is what bounds how long a key revoked on another instance keeps working here. Least
 * recently used entries make room for new ones, so a flood of made-up keys evicts other
 * made-up keys rather than the keys in real use.
 */
export class ApiKeyCache {
  private readonly entries: LRUCache<string, { principal: ApiKeyPrincipal | null }>;

  /** `clock` is for tests; the cache reads performance.now() otherwise. */
  constructor(
    private readonly knownTtlMs: number,
    clock?: { now(): number },
  ) {
    this.entries = new LRUCache({ max: MAX_CACHED_KEYS, ttlResolution: 0, ...(clock ? { perf: clock } : {}) });
  }

  /** undefined when not cached (look it up), null when cached as unknown. */
  get(keyHash: string): ApiKeyPrincipal | null | undefined {
    return this.entries.get(keyHash)?.principal;
  }

  remember(keyHash: string, principal: ApiKeyPrincipal | null): void {
    const ttl = principal ? this.knownTtlMs : Math.min(UNKNOWN_KEY_TTL_MS, this.knownTtlMs);
    if (ttl > 0) this.entries.set(keyHash, { principal }, { ttl });
  }

  forget(keyHash: string): void {
    this.entries.delete(keyHash);
  }
}
