/**
 * Every PostgreSQL advisory lock the service takes, in one place, so that no two kinds of work
 * ever share a key by accident. The values never change: during an upgrade, processes of the old
 * and the new version run side by side and must still exclude each other.
 */
export const LOCK_KEYS = {
  /** Applying migrations (src/database/migrate.ts): every instance starting at once waits for the one migrating. */
  migrations: 7_341_002,
  /** Purging idempotency keys past their window: one worker of the deployment at a time. */
  idempotencyPurge: 7_341_015,
  /** Pruning audit entries past AUDIT_RETENTION: one worker at a time. */
  auditPrune: 7_341_017,
  /** The webhook reconciler's pass (re-enqueueing, auto-disable, pruning the delivery log): one worker at a time. */
  webhookReconcile: 0x6e667477, // "nftw"
} as const;

/**
 * Transaction-scoped locks keyed by a name rather than a number, taken with
 * `pg_advisory_xact_lock(hashtextextended(<name>, 0))`: the name's 64-bit hash is the key, so
 * it cannot meet the small keys above but by a hash collision (about one in 2^64).
 */
export const LOCK_NAMES = {
  /** Opening a wallet history replay: an organization's requests are counted one at a time. */
  walletSync: (organizationId: string) => `wallet_sync:${organizationId}`,
  /** Registering a contract to index: an organization's registrations are counted one at a time. */
  contractIndex: (organizationId: string) => `contract_index:${organizationId}`,
} as const;
