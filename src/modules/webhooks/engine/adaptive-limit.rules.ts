import type { AttemptOutcome } from './webhook-sender';

/**
 * The adaptive in-flight limit of an endpoint (additive increase, multiplicative decrease, as TCP's
 * congestion window and Netflix's concurrency-limits): pure rules. The limit lives in Redis,
 * shared by every worker (adaptive-limits.ts applies what these rules decide); each worker judges
 * its own answers against the receiver's latency as it saw it.
 */

/** A latency this much above the smoothed minimum still counts as holding (absorbs a busy sender's jitter). */
export const LATENCY_SLACK_MS = 25;
/**
 * How far the smoothed minimum moves towards a round trip's worth of answers slower than it (each
 * answer moves it by this over the limit it started under): a lasting change becomes the new
 * normal after some 35 round trips, however many attempts each of them carries.
 */
export const BASELINE_DRIFT = 0.02;
/** The multiplicative decrease. */
export const DECREASE_FACTOR = 0.5;

/** What one answer says of the receiver's load. */
export type LoadSignal = 'good' | 'slow' | 'overload' | 'neutral';

/** The shared state of an endpoint's limit at the start of an attempt, as the acquire read it. */
export interface LimitAtStart {
  limit: number;
  /** Below this the limit grows by one per good answer (slow start); at or above it, by one per `limit` good answers. */
  threshold: number;
  /** Attempts in flight to the endpoint, across workers, this one included. */
  inFlight: number;
}

/** What to do to the shared limit after an answer. */
export type LimitChange = { kind: 'none' } | { kind: 'grow'; by: number } | { kind: 'cut'; to: number };

/**
 * Where an endpoint's limit starts, and restarts after an hour without attempts: the service's
 * default in-flight limit (WEBHOOK_PER_RECEIVER_CONCURRENCY, 10), never above the endpoint's
 * `maxInFlight`. An endpoint that sets none therefore starts where every endpoint stood before
 * the limit adapted; one allowed more climbs from there by slow start (one more per good answer,
 * so from 10 to 200 within about 190 fast answers).
 */
export function startLimit(maxInFlight: number, serviceDefault: number): number {
  return Math.max(1, Math.min(maxInFlight, serviceDefault));
}

/** The latency up to which the receiver counts as holding: twice its smoothed minimum, and at least LATENCY_SLACK_MS above it. */
export function tolerableLatencyMs(baselineMs: number): number {
  return Math.max(2 * baselineMs, baselineMs + LATENCY_SLACK_MS);
}

/**
 * The smoothed minimum latency after an answer: a faster answer becomes it at once, a slower one
 * pulls it up by BASELINE_DRIFT × `weight` of the difference (weight: 1 / the limit the attempt
 * started under, so a burst of slow answers moves it no faster than one round trip does). A
 * receiver that stays slower is thus, after some dozens of round trips, judged against its new
 * normal instead of being held at the floor forever.
 */
export function nextBaseline(baselineMs: number | null, latencyMs: number, weight = 1): number {
  if (baselineMs === null || latencyMs <= baselineMs) return latencyMs;
  return baselineMs + (latencyMs - baselineMs) * BASELINE_DRIFT * Math.min(1, weight);
}

/**
 * What an answer says: 429, 503, a timeout or a network error is overload; a success within the
 * tolerable latency is good, one past it slow; anything else (another status, a request the
 * policy blocked) says nothing of the receiver's load.
 */
export function loadSignal(
  answer: { outcome: AttemptOutcome; status: number | null; latencyMs: number },
  baselineMs: number | null,
): LoadSignal {
  if (answer.outcome === 'timeout' || answer.outcome === 'network_error') return 'overload';
  if (answer.status === 429 || answer.status === 503) return 'overload';
  if (answer.outcome !== 'success') return 'neutral';
  if (baselineMs === null) return 'good';
  return answer.latencyMs > tolerableLatencyMs(baselineMs) ? 'slow' : 'good';
}

/** The multiplicative decrease: half the limit the attempt started under, at least 1. */
export function decreasedLimit(limit: number): number {
  return Math.max(1, Math.floor(limit * DECREASE_FACTOR));
}

/**
 * The change an answer makes, and this worker's credit of good answers towards the next +1.
 * A slow or overloaded answer cuts the limit to half of what it was when the attempt started
 * (the store applies at most one cut per round trip: answers to attempts started before the last
 * cut are its echo, not news). A good answer grows it while the limit was in use (at least half
 * of it in flight): by one per answer below the threshold (slow start), else by one per `limit`
 * good answers (additive increase). A limit nobody fills does not grow: it would say nothing.
 */
export function limitChange(signal: LoadSignal, atStart: LimitAtStart, credit: number): { change: LimitChange; credit: number } {
  if (signal === 'slow' || signal === 'overload') return { change: { kind: 'cut', to: decreasedLimit(atStart.limit) }, credit: 0 };
  if (signal === 'neutral' || atStart.inFlight * 2 < atStart.limit) return { change: { kind: 'none' }, credit };
  if (atStart.limit < atStart.threshold) return { change: { kind: 'grow', by: 1 }, credit: 0 };
  const earned = credit + 1;
  return earned >= atStart.limit ? { change: { kind: 'grow', by: 1 }, credit: 0 } : { change: { kind: 'none' }, credit: earned };
}

/**
 * The shared state after a change, as the store applies it (the Lua in adaptive-limits.ts does
 * the same arithmetic atomically): a cut applies only to an attempt started after the last cut,
 * and sets the threshold to the new limit; every limit stays within [1, maxInFlight].
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
