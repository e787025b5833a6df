/**
 * A replica's lag in milliseconds: 0 when it has replayed all the WAL it received, otherwise the
 * age of the last transaction it replayed (Infinity when it never replayed one). A server that is
 * not in recovery has no WAL to receive, and reads as 0.
 */
export const REPLICA_LAG_SQL = `
  select case
    when pg_last_wal_receive_lsn() is null or pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn() then 0
    else coalesce(extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000, 'Infinity')
  end::float8 as lag_ms`;

/** One reading of a replica: its lag, or null when it did not answer. */
export type ReplicaReading = { lagMs: number } | null;

/**
 * Readings past the bound in a row that take a replica out of rotation. WAL that has arrived but
 * is not replayed yet reads as the age of the last replayed transaction, which on a quiet primary
 * can be seconds for the few milliseconds the replay takes: one such reading is not lag. Two
 * readings a probe interval apart still skip a replica that is really behind within a second.
 */
export const READINGS_PAST_BOUND_TO_SKIP = 2;

/** What the monitor knows of a replica. */
export interface ReplicaState {
  /** Whether it serves reads. */
  readonly usable: boolean;
  /** Its last lag reading; null when it did not answer. */
  readonly lagMs: number | null;
  /** Readings past the bound in a row. */
  readonly pastBound: number;
}

/** Before its first reading a replica serves nothing. */
export const UNMEASURED: ReplicaState = { usable: false, lagMs: null, pastBound: 0 };

/** The state after one more reading: an unanswered probe skips at once, lag past the bound only when it lasts. */
export function nextState(previous: ReplicaState, reading: ReplicaReading, maxLagMs: number): ReplicaState {
  if (reading === null) return UNMEASURED;
  if (reading.lagMs <= maxLagMs) return { usable: true, lagMs: reading.lagMs, pastBound: 0 };
  const pastBound = previous.pastBound + 1;
  return { usable: previous.usable && pastBound < READINGS_PAST_BOUND_TO_SKIP, lagMs: reading.lagMs, pastBound };
}

/** A replica named in logs and metrics by host, port and database: its URL may hold a password. */
export function replicaLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}
