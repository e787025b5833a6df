import {
  afterAnswer,
  AnswersSeen,
  appliedLimit,
  decreasedLimit,
  isOverload,
  LATENCY_SLACK_MS,
  LimitChange,
  nextBaseline,
  NOTHING_SEEN,
  startLimit,
  tolerableLatencyMs,
  windowAnswers,
} from './adaptive-limit.rules';
import type { AttemptOutcome } from './webhook-sender';

const answer = (outcome: AttemptOutcome, status: number | null, latencyMs: number) => ({ outcome, status, latencyMs });
const ok = (latencyMs: number) => answer('success', 200, latencyMs);

/** Feeds answers to attempts all started under `atStart`; the changes they make and what is seen after. */
function feed(
  seen: AnswersSeen,
  answers: ReturnType<typeof answer>[],
  atStart: { limit: number; threshold: number; inFlight: number; floor: number },
) {
  const changes: LimitChange[] = [];
  for (const a of answers) {
    const next = afterAnswer(seen, a, atStart);
    seen = next.seen;
    changes.push(next.change);
  }
  return { seen, changes: changes.filter((c) => c.kind !== 'none') };
}

describe('the adaptive in-flight limit of an endpoint', () => {
  it('starts at the service default, never above the endpoint’s maxInFlight nor below 1', () => {
    expect(startLimit(200, 10)).toBe(10);
    expect(startLimit(4, 10)).toBe(4);
    expect(startLimit(10, 10)).toBe(10);
    expect(startLimit(1, 10)).toBe(1);
  });

  it('tolerates twice the smoothed minimum latency, and at least the slack above it', () => {
    expect(tolerableLatencyMs(1)).toBe(1 + LATENCY_SLACK_MS);
    expect(tolerableLatencyMs(100)).toBe(200);
  });

  it('takes a faster window as the new minimum at once and drifts slowly towards slower ones', () => {
    expect(nextBaseline(null, 7)).toBe(7);
    expect(nextBaseline(10, 3)).toBe(3);
    expect(nextBaseline(10, 310)).toBeCloseTo(10 + 300 * 0.05);
    // A receiver that stays slower becomes its own normal after some windows.
    let baseline = 1;
    for (let i = 0; i < 14; i++) baseline = nextBaseline(baseline, 300);
    expect(tolerableLatencyMs(baseline)).toBeGreaterThanOrEqual(300);
  });

  it('reads 429, 503, timeouts and network errors as overload, and cuts on the first of them', () => {
    expect(
      [answer('http_error', 429, 2), answer('http_error', 503, 2), answer('timeout', null, 3000), answer('network_error', null, 1)].map(
        isOverload,
      ),
    ).toEqual([true, true, true, true]);
    expect([answer('http_error', 500, 2), answer('http_error', 404, 2), answer('blocked', null, 0), ok(1)].map(isOverload)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    const atStart = { limit: 40, threshold: 200, inFlight: 40, floor: 10 };
    expect(afterAnswer({ baselineMs: 5, answers: 3, latencySumMs: 15, slowWindows: 0 }, answer('http_error', 503, 2), atStart)).toEqual({
      seen: { baselineMs: 5, answers: 0, latencySumMs: 0, slowWindows: 0 },
      change: { kind: 'cut', to: 20 },
    });
    // Another status or a blocked request says nothing.
    expect(feed(NOTHING_SEEN, [answer('http_error', 500, 2), answer('blocked', null, 0)], atStart).changes).toEqual([]);
  });

  it('halves, never below 1 or the floor given', () => {
    expect(decreasedLimit(200)).toBe(100);
    expect(decreasedLimit(3)).toBe(1);
    expect(decreasedLimit(1)).toBe(1);
    expect(decreasedLimit(12, 10)).toBe(10);
  });

  it('never lets latency alone cut below the floor (the start limit); an overload answer still does', () => {
    const seen = { baselineMs: 20, answers: 0, latencySumMs: 0, slowWindows: 1 };
    const slow = Array.from({ length: 10 }, () => ok(300));
    expect(feed(seen, slow, { limit: 10, threshold: 10, inFlight: 10, floor: 10 }).changes).toEqual([]);
    expect(feed(seen, slow.slice(0, 8), { limit: 12, threshold: 12, inFlight: 12, floor: 10 }).changes).toEqual([]);
    expect(feed(seen, slow.concat(slow).slice(0, 12), { limit: 12, threshold: 12, inFlight: 12, floor: 10 }).changes).toEqual([
      { kind: 'cut', to: 10 },
    ]);
    expect(feed(seen, [answer('timeout', null, 30_000)], { limit: 10, threshold: 10, inFlight: 10, floor: 10 }).changes).toEqual([
      { kind: 'cut', to: 5 },
    ]);
  });

  it('judges successful answers by windows of the limit’s worth (at most 50): two slow windows in a row cut, a single slow answer does not', () => {
    expect([windowAnswers(1), windowAnswers(8), windowAnswers(200)]).toEqual([1, 8, 50]);
    const atStart = { limit: 8, threshold: 8, inFlight: 8, floor: 1 };
    const seen = { baselineMs: 20, answers: 0, latencySumMs: 0, slowWindows: 0 };
    // One answer of 228 ms among quick ones (a busy sender's hiccup): the window's mean holds.
    expect(feed(seen, [ok(228), ...Array.from({ length: 7 }, () => ok(20))], atStart).changes).toEqual([{ kind: 'grow', by: 1 }]);
    // One window of 300 ms answers may be the sender's own stall: nothing yet; the second in a row cuts by a fifth.
    const slowAnswers = (n: number) => Array.from({ length: n }, () => ok(300));
    expect(feed(seen, slowAnswers(8), atStart).changes).toEqual([]);
    const twice = feed(seen, slowAnswers(16), atStart);
    expect(twice.changes).toEqual([{ kind: 'cut', to: 6 }]);
    // Each further slow window cuts again (the store takes one cut per round trip); a window that holds ends the run.
    expect(feed(twice.seen, slowAnswers(8), atStart).changes).toEqual([{ kind: 'cut', to: 6 }]);
    expect(
      feed(
        twice.seen,
        Array.from({ length: 8 }, () => ok(20)),
        atStart,
      ).seen.slowWindows,
    ).toBe(0);
  });

  it('grows by the window’s answers below the threshold, by one per window above it while the limit is in use', () => {
    const seen = { baselineMs: 1, answers: 0, latencySumMs: 0, slowWindows: 0 };
    const ten = Array.from({ length: 10 }, () => ok(1));
    // Slow start grows whatever is in flight: a burst finds its room at once.
    expect(feed(seen, ten, { limit: 10, threshold: 200, inFlight: 1, floor: 10 }).changes).toEqual([{ kind: 'grow', by: 10 }]);
    expect(feed(seen, ten, { limit: 10, threshold: 10, inFlight: 10, floor: 10 }).changes).toEqual([{ kind: 'grow', by: 1 }]);
    // Additive increase needs the limit in use.
    expect(feed(seen, ten, { limit: 10, threshold: 10, inFlight: 4, floor: 10 }).changes).toEqual([]);
  });

  it('applies at most one cut per round trip: answers to attempts started before the last cut are its echo', () => {
    const state = { limit: 40, threshold: 200, lastCutAt: 0 };
    const cut = appliedLimit(state, { kind: 'cut', to: 20 }, 100, 400, 200);
    expect(cut).toEqual({ limit: 20, threshold: 20, lastCutAt: 400 });
    expect(appliedLimit(cut, { kind: 'cut', to: 20 }, 150, 401, 200)).toEqual(cut);
    expect(appliedLimit(cut, { kind: 'cut', to: 10 }, 400, 700, 200)).toEqual({ limit: 10, threshold: 10, lastCutAt: 700 });
  });

  it('keeps the limit within [1, maxInFlight], also after maxInFlight is lowered', () => {
    expect(appliedLimit({ limit: 200, threshold: 200, lastCutAt: 0 }, { kind: 'grow', by: 1 }, 0, 1, 200).limit).toBe(200);
    expect(appliedLimit({ limit: 150, threshold: 200, lastCutAt: 0 }, { kind: 'none' }, 0, 1, 20)).toEqual({
      limit: 20,
      threshold: 20,
      lastCutAt: 0,
    });
    expect(appliedLimit({ limit: 1, threshold: 1, lastCutAt: 0 }, { kind: 'cut', to: 1 }, 5, 6, 20).limit).toBe(1);
  });

  /** Rounds of a receiver that answers every attempt in flight at once, as the store and the rules see it. */
  function simulate(maxInFlight: number, rounds: { latencyMs: number; status: number }[]): number[] {
    let state = { limit: startLimit(maxInFlight, 10), threshold: maxInFlight, lastCutAt: 0 };
    let seen: AnswersSeen = NOTHING_SEEN;
    let now = 0;
    const limits: number[] = [];
    for (const round of rounds) {
      const startedAt = now;
      const atStart = { limit: state.limit, threshold: state.threshold, inFlight: state.limit, floor: startLimit(maxInFlight, 10) };
      now += Math.max(1, round.latencyMs);
      for (let i = 0; i < atStart.limit; i++) {
        const next = afterAnswer(seen, answer(round.status === 200 ? 'success' : 'http_error', round.status, round.latencyMs), atStart);
        seen = next.seen;
        state = appliedLimit(state, next.change, startedAt, now, maxInFlight);
      }
      limits.push(state.limit);
    }
    return limits;
  }

  it('climbs from 10 to a maxInFlight of 200 within a handful of round trips of a 1 ms receiver', () => {
    const limits = simulate(
      200,
      Array.from({ length: 6 }, () => ({ latencyMs: 1, status: 200 })),
    );
    expect(limits).toEqual([20, 40, 80, 130, 200, 200]);
  });

  it('falls by a fifth per round trip when the receiver slows from 1 ms to 300 ms, until 300 ms is its new normal', () => {
    const limits = simulate(200, [
      ...Array.from({ length: 5 }, () => ({ latencyMs: 1, status: 200 })),
      ...Array.from({ length: 15 }, () => ({ latencyMs: 300, status: 200 })),
    ]);
    expect(limits.slice(4, 11)).toEqual([200, 160, 128, 102, 81, 64, 51]);
    // The smoothed minimum has drifted towards 300 ms: the limit climbs again, one per window.
    expect(limits.slice(11).every((limit, i) => limit > (limits[10 + i] ?? 0))).toBe(true);
  });

  it('falls to the floor of 1 on a receiver answering 503 or 429', () => {
    const limits = simulate(
      50,
      Array.from({ length: 6 }, (_, i) => ({ latencyMs: 2, status: i % 2 === 0 ? 503 : 429 })),
    );
    expect(limits).toEqual([5, 2, 1, 1, 1, 1]);
  });
});
