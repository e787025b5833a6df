import { appliedLimit, type LimitChange } from './adaptive-limit.rules';

/**
 * How the workers share an endpoint's adaptive in-flight limit without asking Redis per attempt:
 * pure arithmetic. Each worker holds a grant, a number of the endpoint's places it may fill, taken
 * and renewed in one Redis script per endpoint and batch (adaptive-limits.ts runs the same
 * arithmetic in Lua, atomically, against every worker's recorded grant). Between two calls a worker
 * admits, claims and sends within its grant alone, so an attempt costs no Redis round trip, and a
 * webhook that finds no room is never claimed.
 */

/** The endpoint's shared limit as Redis keeps it (`l`, `t`, `c` of its limit hash). */
export interface SharedLimit {
  limit: number;
  threshold: number;
  /** When the limit was last cut, on Redis's clock. */
  lastCutAt: number;
}

/** A worker's grant as Redis records it: the places it holds, and how many it would use. */
export interface RecordedGrant {
  held: number;
  want: number;
}

/**
 * What a worker gathered from its answers since its last grant call, sent with the next one:
 * the sum of the grows, and the deepest cut with the latest start among the attempts that asked
 * for one (a cut applies only to attempts started after the last one, see appliedLimit).
 */
export interface PendingChanges {
  grow: number;
  cut: { to: number; startedAt: number } | null;
}

export const NO_CHANGES: PendingChanges = { grow: 0, cut: null };

/**
 * A worker's fair share of `limit`, max-min fair over what every worker wants: a worker wanting
 * less than an even split keeps what it wants, and the rest is split evenly among the others,
 * rounded up so the places are used (the grant never exceeds what the others leave free anyway).
 */
export function fairShare(limit: number, want: number, othersWants: readonly number[]): number {
  const capped = (w: number) => Math.max(0, Math.min(w, limit));
  const wants = [...othersWants.map(capped), capped(want)].sort((a, b) => a - b);
  let remaining = limit;
  let left = wants.length;
  for (const w of wants) {
    if (w * left > remaining) break;
    remaining -= w;
    left -= 1;
  }
  return left === 0 ? capped(want) : Math.min(capped(want), Math.ceil(remaining / left));
}

/**
 * The grant a worker gets: `target`, the places it may fill from now on, is what it asks for
 * within its fair share (of what every worker wants) and within what the other workers' grants
 * leave of the limit; `hold`, what Redis records for it, is never less than `held` (the places it
 * says it still fills: its attempts in flight, or its previous target while it is in use), so
 * attempts already sending stay counted. A worker may want more than it asks for: an idle one
 * still wants its last share for a moment, so the others leave it room, without holding it.
 * Each call keeps the sum of the holds within the larger of the limit and the sum before it, and
 * so never above maxInFlight: a worker over its share (the limit was cut, another worker came)
 * shrinks as its attempts end, not by cutting them off.
 */
export function grantFor(input: { limit: number; want: number; ask?: number; held: number; others: readonly RecordedGrant[] }): {
  target: number;
  hold: number;
} {
  const othersHeld = input.others.reduce((sum, o) => sum + o.held, 0);
  const share = fairShare(
    input.limit,
    input.want,
    input.others.map((o) => o.want),
  );
  const target = Math.max(0, Math.min(input.ask ?? input.want, share, input.limit - othersHeld));
  return { target, hold: Math.max(input.held, target) };
}

/** What a worker knows of one endpoint when it calls for its grant. */
export interface GrantUse {
  /** What Redis records for it now. */
  hold: number;
  inFlight: number;
  /** The places it may fill now (its target within the limit it knows). */
  usable: number;
  /** Attempts its batches asked for lately (the last two renewal windows). */
  asked: number;
  /** The target it had when batches last asked for the endpoint. */
  lastTarget: number;
  /** Batches asked for the endpoint within the last few seconds. */
  recentlyUsed: boolean;
  stopping: boolean;
  maxInFlight: number;
}

/**
 * What a worker sends with a grant call: `held`, the places it says it still fills (never more
 * than it holds); `ask`, the places it asks for; `want`, what it would use, for the fair shares.
 * In use (batches asked lately), it fills its attempts in flight, or the places it may fill now
 * when more (attempts admitted but not yet sent count against those), and asks for what is in
 * flight plus what was asked. Unused, it shrinks to what is in flight; used a moment ago, it still
 * wants the target it had, without holding it: when the next burst comes, the worker that asks
 * first leaves the others their share (it took the whole limit before, and the others refused
 * what they took from the queue until the grants were rebalanced). Stopping, it wants nothing.
 */
export function callFor(use: GrantUse): { held: number; want: number; ask: number } {
  const { hold, inFlight } = use;
  if (use.stopping) return { held: Math.min(hold, inFlight), want: 0, ask: 0 };
  if (use.asked > 0) {
    const want = Math.min(use.maxInFlight, inFlight + use.asked);
    return { held: Math.min(hold, Math.max(inFlight, use.usable)), want, ask: want };
  }
  const held = Math.min(hold, inFlight);
  const want = Math.min(use.maxInFlight, use.recentlyUsed ? Math.max(inFlight, use.lastTarget) : inFlight);
  return { held, want, ask: Math.min(use.maxInFlight, inFlight) };
}

/**
 * The shared limit after a grant call's changes, as the script applies them: the cut first (when
 * its attempts started after the last cut), then the grows. A worker also applies its own
 * changes to what it knows at once, with the same function, so a cut slows it before Redis hears.
 */
export function appliedChanges(state: SharedLimit, pending: PendingChanges, now: number, maxInFlight: number): SharedLimit {
  const cut = pending.cut;
  const afterCut = cut
    ? appliedLimit(state, { kind: 'cut', to: cut.to }, cut.startedAt, now, maxInFlight)
    : appliedLimit(state, { kind: 'none' }, 0, now, maxInFlight);
  return pending.grow > 0 ? appliedLimit(afterCut, { kind: 'grow', by: pending.grow }, 0, now, maxInFlight) : afterCut;
}

/**
 * One answer's change, applied to what the worker knows of the limit and gathered for its next
 * grant call. A cut that its attempt's start puts before the last cut is an echo of it and changes
 * nothing; one that applies drops the grows gathered before it (they came from the load the cut
 * answers).
 */
export function withChange(
  known: SharedLimit,
  pending: PendingChanges,
  change: LimitChange,
  attemptStartedAt: number,
  now: number,
  maxInFlight: number,
): { known: SharedLimit; pending: PendingChanges; cut: boolean } {
  if (change.kind === 'grow') {
    return {
      known: appliedLimit(known, change, attemptStartedAt, now, maxInFlight),
      pending: { ...pending, grow: pending.grow + change.by },
      cut: false,
    };
  }
  if (change.kind !== 'cut' || attemptStartedAt < known.lastCutAt) return { known, pending, cut: false };
  const previous = pending.cut;
  return {
    known: appliedLimit(known, change, attemptStartedAt, now, maxInFlight),
    pending: {
      grow: 0,
      cut: {
        to: Math.min(previous?.to ?? change.to, change.to),
        startedAt: Math.max(previous?.startedAt ?? attemptStartedAt, attemptStartedAt),
      },
    },
    cut: true,
  };
}
