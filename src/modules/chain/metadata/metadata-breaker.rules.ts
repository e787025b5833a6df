/**
 * The circuit breaker of a contract's metadata fetches (docs/CHAIN.md "Following a chain"): a
 * contract whose documents time out or refuse connections again and again (a server that never
 * answers, or an airdrop pointed at a tarpit) stops being fetched for a while, so it neither
 * holds the fetcher's slots nor gets its server hammered; then one trial fetch decides whether it
 * closes again. The state lives in the metadata_breaker table, shared by every process that
 * fetches metadata.
 */

/** Timeouts or connection failures in a row (no answer in between) that open a contract's breaker. */
export const BREAKER_FAILURES_TO_OPEN = 10;

/** How long an open breaker pauses the contract's fetches before one trial is let through. */
export const BREAKER_PAUSE_MS = 60_000;

/** A contract's breaker as stored; no row is a closed breaker with no failure counted. */
export interface BreakerState {
  /** Timeouts or connection failures in a row. */
  failures: number;
  /** While in the future, the contract's fetches are paused. */
  openUntil: Date | null;
  /** A trial fetch is running until then (another process's or ours). */
  trialUntil: Date | null;
}

/**
 * What a worker may do with a claimed token of the contract: fetch it (`closed`), put it off until
 * `until` (`open`, or a trial already running), or try to take the one trial (`trial`).
 */
export type BreakerGate = { kind: 'closed' } | { kind: 'open'; until: Date } | { kind: 'trial' };

export function breakerGate(state: BreakerState | null, now: Date): BreakerGate {
  if (!state || state.failures < BREAKER_FAILURES_TO_OPEN || state.openUntil === null) return { kind: 'closed' };
  if (state.openUntil > now) return { kind: 'open', until: state.openUntil };
  if (state.trialUntil !== null && state.trialUntil > now) return { kind: 'open', until: state.trialUntil };
  return { kind: 'trial' };
}

/** The token's metadataError while its contract's breaker holds it back. */
export function breakerMessage(until: Date): string {
  return (
    `the circuit breaker of this contract is open after ${BREAKER_FAILURES_TO_OPEN} timeouts or connection failures in a row: ` +
    `its metadata fetches are paused until ${until.toISOString()}`
  );
}

/**
 * How many more of the contract's fetches may run at once before the breaker's verdict: no more
 * than the failures it still takes to open it, so that a contract that is failing does not get
 * a whole round of new connections while the last failures before the threshold are counted.
 */
export function breakerBudget(failuresInRow: number): number {
  return Math.max(1, BREAKER_FAILURES_TO_OPEN - failuresInRow);
}
