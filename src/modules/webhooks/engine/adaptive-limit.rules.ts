import type { AttemptOutcome } from './webhook-sender';

/**
 * The adaptive in-flight limit of an endpoint (additive increase, multiplicative decrease, as TCP's
 * congestion window and Netflix's concurrency-limits): pure rules. The limit lives in Redis,
 * shared by every worker through grants (in-flight-grant.rules.ts; adaptive-limits.ts applies
 * what these rules decide, with each worker's next grant call); each worker judges its own answers
 * against the receiver's latency as it saw it.
 */

/**
 * A window's mean latency this much above the smoothed minimum still counts as holding.
 * Latencies are measured by the sending worker: its own event-loop delay is taken off each, but
 * a worker, a database and a receiver sharing two busy cores still read a 1 ms receiver at
 * 50-250 ms in a chain backfill's first seconds. Windows' means and this margin keep that from
 * reading as the receiver slowing; a receiver that goes from 1 ms to 200 ms still does.
 */
export const LATENCY_SLACK_MS = 100;
/**
 * How far the smoothed minimum moves towards a window's mean latency when that is slower: a
 * lasting change becomes the new normal after some 14 windows.
 */
export const BASELINE_DRIFT = 0.05;
/** The multiplicative decrease on an overload answer (429, 503, a timeout, a network error): the receiver said it has too much. */
export const DECREASE_FACTOR = 0.5;
/**
 * The multiplicative decrease on latency alone, gentler (as Netflix's concurrency-limits back off
 * by 0.9 on latency): a receiver sharing a busy host reads slower in bursts without being
 * overloaded, and each cut is climbed back one per window.
 */
export const LATENCY_DECREASE_FACTOR = 0.8;
/** Successful answers judged together: the limit's worth (one round trip), at most this many. */
export const MAX_WINDOW_ANSWERS = 50;

/** The shared state of an endpoint's limit at the start of an attempt, as the worker knew it. */
export interface LimitAtStart {
  limit: number;
  /** Below this the limit grows by one per good answer (slow start); at or above it, by one per window of them. */
  threshold: number;
  /** Attempts in flight to the endpoint, this one included: the worker's own, and the places the other workers hold. */
  inFlight: number;
  /**
   * How low latency alone may cut the limit: its start limit (see startLimit). Only overload
   * answers go lower; latency as a worker measures it also holds that worker's own delays, and a
   * cut to below where every endpoint stood before the limit adapted made a burst slower than
   * not adapting at all.
   */
  floor: number;
}

/** What to do to the shared limit after an answer. */
export type LimitChange = { kind: 'none' } | { kind: 'grow'; by: number } | { kind: 'cut'; to: number };

/** What one worker has seen of an endpoint's answers: the smoothed minimum of windows' mean latency, and the open window. */
export interface AnswersSeen {
  baselineMs: number | null;
  answers: number;
  latencySumMs: number;
  /** Windows in a row whose mean was past the tolerable latency. */
  slowWindows: number;
}

export const NOTHING_SEEN: AnswersSeen = { baselineMs: null, answers: 0, latencySumMs: 0, slowWindows: 0 };

/** Slow windows in a row before the limit is cut: one alone is as likely the sending worker's own stall (a GC, a long batch). */
export const SLOW_WINDOWS_TO_CUT = 2;

/** One answer, as the limit judges it. */
export interface JudgedAnswer {
  outcome: AttemptOutcome;
  status: number | null;
  latencyMs: number;
}

/**
 * Where an endpoint's limit starts, and restarts after an hour without attempts: the service's
 * default in-flight limit (WEBHOOK_PER_RECEIVER_CONCURRENCY, 10), never above the endpoint's
 * `maxInFlight`. An endpoint that sets none therefore starts where every endpoint stood before
 * the limit adapted; one allowed more climbs from there by slow start (the limit grows by the
 * good answers of each window, so it doubles every round trip: 10 to 200 within about 190).
 */
export function startLimit(maxInFlight: number, serviceDefault: number): number {
  return Math.max(1, Math.min(maxInFlight, serviceDefault));
}

/** The latency up to which the receiver counts as holding: twice its smoothed minimum, and at least LATENCY_SLACK_MS above it. */
export function tolerableLatencyMs(baselineMs: number): number {
  return Math.max(2 * baselineMs, baselineMs + LATENCY_SLACK_MS);
}

/**
 * The smoothed minimum after a window: a faster mean becomes it at once, a slower one pulls it up
 * by BASELINE_DRIFT of the difference, so a receiver that stays slower is, after some 14 windows,
 * judged against its new normal instead of being held at the floor forever.
 */
export function nextBaseline(baselineMs: number | null, windowMeanMs: number): number {
  if (baselineMs === null || windowMeanMs <= baselineMs) return windowMeanMs;
  return baselineMs + (windowMeanMs - baselineMs) * BASELINE_DRIFT;
}

/** 429, 503, a timeout or a network error: the receiver says it has too much. */
export function isOverload(answer: JudgedAnswer): boolean {
  return answer.outcome === 'timeout' || answer.outcome === 'network_error' || answer.status === 429 || answer.status === 503;
}

/** The multiplicative decrease: `factor` (half unless given) of the limit the attempt started under, at least `floor` (1 unless given). */
export function decreasedLimit(limit: number, floor = 1, factor = DECREASE_FACTOR): number {
  return Math.max(1, floor, Math.floor(limit * factor));
}

/** How many successful answers make a window, for an attempt started under `limit`. */
export function windowAnswers(limit: number): number {
  return Math.max(1, Math.min(MAX_WINDOW_ANSWERS, limit));
}

/**
 * The change an answer makes, and what the worker has seen after it. An overload answer (429,
 * 503, a timeout, a network error) cuts the limit to half of what it was when the attempt started
 * at once, and opens a new window. Successful answers gather into windows of the limit's worth
 * (at most MAX_WINDOW_ANSWERS); a window whose mean latency is past the tolerable one cuts when
 * the window before it was slow too (SLOW_WINDOWS_TO_CUT), and every further slow one cuts again,
 * never below the floor (the start limit);
 * a window that holds grows the limit: by its number of answers below the threshold (slow start, up to
 * maxInFlight until the first cut: a burst finds the room it is allowed at once), at or above it
 * by one, and then only while the limit is in use (at least half of it in flight: a limit nobody
 * fills says nothing of the receiver). Other answers (another status, a request the policy
 * blocked) say nothing of the receiver's load. The store applies at most one cut per round trip
 * (see appliedLimit).
 */
export function afterAnswer(seen: AnswersSeen, answer: JudgedAnswer, atStart: LimitAtStart): { seen: AnswersSeen; change: LimitChange } {
  if (isOverload(answer)) {
    return { seen: { ...seen, answers: 0, latencySumMs: 0 }, change: { kind: 'cut', to: decreasedLimit(atStart.limit) } };
  }
  if (answer.outcome !== 'success') return { seen, change: { kind: 'none' } };
  const answers = seen.answers + 1;
  const latencySumMs = seen.latencySumMs + answer.latencyMs;
  if (answers < windowAnswers(atStart.limit)) return { seen: { ...seen, answers, latencySumMs }, change: { kind: 'none' } };
  const meanMs = latencySumMs / answers;
  const slow = seen.baselineMs !== null && meanMs > tolerableLatencyMs(seen.baselineMs);
  const closed = {
    baselineMs: nextBaseline(seen.baselineMs, meanMs),
    answers: 0,
    latencySumMs: 0,
    slowWindows: slow ? seen.slowWindows + 1 : 0,
  };
  if (slow) {
    const change: LimitChange =
      closed.slowWindows >= SLOW_WINDOWS_TO_CUT && atStart.limit > atStart.floor
        ? { kind: 'cut', to: decreasedLimit(atStart.limit, atStart.floor, LATENCY_DECREASE_FACTOR) }
        : { kind: 'none' };
    return { seen: closed, change };
  }
  if (atStart.limit < atStart.threshold) return { seen: closed, change: { kind: 'grow', by: answers } };
  if (atStart.inFlight * 2 < atStart.limit) return { seen: closed, change: { kind: 'none' } };
  return { seen: closed, change: { kind: 'grow', by: 1 } };
}

/**
 * The shared state after a change, as the store applies it (the grant script in
 * in-flight-grant.script.ts does the same arithmetic atomically, see appliedChanges): a cut
 * applies only to an attempt started after the last cut, and sets the threshold to the new limit;
 * every limit stays within [1, maxInFlight].
 */
export function appliedLimit(
  state: { limit: number; threshold: number; lastCutAt: number },
  change: LimitChange,
  attemptStartedAt: number,
  now: number,
  maxInFlight: number,
): { limit: number; threshold: number; lastCutAt: number } {
  const clamp = (n: number) => Math.max(1, Math.min(maxInFlight, n));
  if (change.kind === 'grow') return { ...state, limit: clamp(state.limit + change.by), threshold: clamp(state.threshold) };
  if (change.kind === 'cut' && attemptStartedAt >= state.lastCutAt) {
    const limit = clamp(Math.min(state.limit, change.to));
    return { limit, threshold: limit, lastCutAt: now };
  }
  return { limit: clamp(state.limit), threshold: clamp(state.threshold), lastCutAt: state.lastCutAt };
}
