import {
  appliedLimit,
  decreasedLimit,
  LATENCY_SLACK_MS,
  LimitChange,
  limitChange,
  loadSignal,
  nextBaseline,
  startLimit,
  tolerableLatencyMs,
} from './adaptive-limit.rules';
import type { AttemptOutcome } from './webhook-sender';

const answer = (outcome: AttemptOutcome, status: number | null, latencyMs: number) => ({ outcome, status, latencyMs });

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

  it('takes a faster answer as the new minimum at once and drifts slowly towards slower ones', () => {
    expect(nextBaseline(null, 7)).toBe(7);
    expect(nextBaseline(10, 3)).toBe(3);
    const drifted = nextBaseline(10, 310);
    expect(drifted).toBeGreaterThan(10);
    expect(drifted).toBeLessThan(20);
    // A receiver that stays slower becomes its own normal after some dozens of answers.
    let baseline = 1;
    for (let i = 0; i < 100; i++) baseline = nextBaseline(baseline, 300);
    expect(tolerableLatencyMs(baseline)).toBeGreaterThanOrEqual(300);
    // A burst moves it no faster than one answer per round trip does.
    expect(nextBaseline(10, 310, 1 / 50)).toBeCloseTo(10 + (300 * 0.02) / 50);
  });

  it('reads 429, 503, timeouts and network errors as overload, slow successes as slow, other answers as saying nothing', () => {
    expect(loadSignal(answer('http_error', 429, 2), 1)).toBe('overload');
    expect(loadSignal(answer('http_error', 503, 2), 1)).toBe('overload');
    expect(loadSignal(answer('timeout', null, 3000), 1)).toBe('overload');
    expect(loadSignal(answer('network_error', null, 1), 1)).toBe('overload');
    expect(loadSignal(answer('http_error', 500, 2), 1)).toBe('neutral');
    expect(loadSignal(answer('http_error', 404, 2), 1)).toBe('neutral');
    expect(loadSignal(answer('blocked', null, 0), 1)).toBe('neutral');
    expect(loadSignal(answer('success', 200, 20), 1)).toBe('good');
    expect(loadSignal(answer('success', 200, 300), 1)).toBe('slow');
    expect(loadSignal(answer('success', 200, 300), null)).toBe('good');
  });

  it('halves on a slow or overloaded answer, never below 1', () => {
    expect(decreasedLimit(200)).toBe(100);
    expect(decreasedLimit(3)).toBe(1);
    expect(decreasedLimit(1)).toBe(1);
    const atStart = { limit: 40, threshold: 200, inFlight: 40 };
    expect(limitChange('slow', atStart, 7)).toEqual({ change: { kind: 'cut', to: 20 }, credit: 0 });
    expect(limitChange('overload', atStart, 0)).toEqual({ change: { kind: 'cut', to: 20 }, credit: 0 });
  });

  it('grows by one per good answer below the threshold, by one per limit’s worth of them above it, and only while the limit is in use', () => {
    expect(limitChange('good', { limit: 10, threshold: 200, inFlight: 10 }, 0).change).toEqual({ kind: 'grow', by: 1 });
    expect(limitChange('good', { limit: 10, threshold: 200, inFlight: 4 }, 0).change).toEqual({ kind: 'none' });
    expect(limitChange('neutral', { limit: 10, threshold: 200, inFlight: 10 }, 3)).toEqual({ change: { kind: 'none' }, credit: 3 });
    let credit = 0;
    const changes: LimitChange[] = [];
    for (let i = 0; i < 8; i++) {
      const next = limitChange('good', { limit: 4, threshold: 4, inFlight: 4 }, credit);
      credit = next.credit;
      changes.push(next.change);
    }
    expect(changes.filter((c) => c.kind === 'grow')).toHaveLength(2);
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
    let baseline: number | null = null;
    let credit = 0;
    let now = 0;
    const limits: number[] = [];
    for (const round of rounds) {
      const startedAt = now;
      const atStart = { limit: state.limit, threshold: state.threshold, inFlight: state.limit };
      now += Math.max(1, round.latencyMs);
      for (let i = 0; i < atStart.limit; i++) {
        const got = answer(round.status === 200 ? 'success' : 'http_error', round.status, round.latencyMs);
        const signal = loadSignal(got, baseline);
        if (got.outcome === 'success') baseline = nextBaseline(baseline, got.latencyMs, 1 / atStart.limit);
        const next = limitChange(signal, atStart, credit);
        credit = next.credit;
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
    expect(limits).toEqual([20, 40, 80, 160, 200, 200]);
  });

  it('falls when the receiver slows from 1 ms to 300 ms, once per round trip', () => {
    const limits = simulate(200, [
      ...Array.from({ length: 5 }, () => ({ latencyMs: 1, status: 200 })),
      ...Array.from({ length: 3 }, () => ({ latencyMs: 300, status: 200 })),
    ]);
    expect(limits.slice(4)).toEqual([200, 100, 50, 25]);
  });

  it('falls to the floor of 1 on a receiver answering 503 or 429', () => {
    const limits = simulate(
      50,
      Array.from({ length: 6 }, (_, i) => ({ latencyMs: 2, status: i % 2 === 0 ? 503 : 429 })),
    );
    expect(limits).toEqual([5, 2, 1, 1, 1, 1]);
  });
});
