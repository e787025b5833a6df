/**
 * The timing every chain follower shares (the wallet follower and the whole-contract indexers):
 * how long a lease lasts, how far backoff grows, how soon a step that met a changing chain runs again.
 */

/** A follower holds what it follows this long after its last renewal; a dead one's lease lapses, then another instance takes over. */
export const LEASE_MS = 15_000;
/** Backoff after node errors grows to this; it never touches readiness or API answers. */
export const MAX_BACKOFF_MS = 30_000;
/** Pause before a step that met a changing chain (or a refused range) runs again. */
export const RETRY_MS = 50;
