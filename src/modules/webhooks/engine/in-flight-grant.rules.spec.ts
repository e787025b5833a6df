import {
  appliedChanges,
  fairShare,
  grantFor,
  callFor,
  NO_CHANGES,
  PendingChanges,
  RecordedGrant,
  SharedLimit,
  withChange,
} from './in-flight-grant.rules';

/** A repeatable pseudo-random sequence (mulberry32), so a failing run can be replayed. */
function random(seed: number): (below: number) => number {
  let a = seed;
  return (below) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

describe('the grants of an endpoint’s in-flight limit', () => {
  it('splits the limit evenly between workers that want it all, rounding up', () => {
    expect(fairShare(10, 10, [])).toBe(10);
    expect(fairShare(10, 10, [10])).toBe(5);
    expect(fairShare(3, 3, [3])).toBe(2);
    expect(fairShare(10, 10, [10, 10])).toBe(4);
  });

  it('leaves a worker that wants less than an even split what it wants, and the rest to the others', () => {
    expect(fairShare(10, 10, [2])).toBe(8);
    expect(fairShare(10, 2, [10])).toBe(2);
    expect(fairShare(10, 10, [1, 2])).toBe(7);
    expect(fairShare(10, 0, [10])).toBe(0);
    // Wants are capped at the limit.
    expect(fairShare(10, 50, [])).toBe(10);
  });

  it('gives a worker nothing while the others hold the limit, but records what it wants so they shrink to their share', () => {
    // A holds the whole limit; B asks.
    const b = grantFor({ limit: 10, want: 10, held: 0, others: [{ held: 10, want: 10 }] });
    expect(b).toEqual({ target: 0, hold: 0 });
    // A renews with 10 still in flight: its target falls to its share, its hold stays with what it sends.
    const a = grantFor({ limit: 10, want: 10, held: 10, others: [{ held: 0, want: 10 }] });
    expect(a).toEqual({ target: 5, hold: 10 });
    // Once its attempts are down to its target, its hold follows, and B gets the rest.
    expect(grantFor({ limit: 10, want: 10, held: 5, others: [{ held: 0, want: 10 }] })).toEqual({ target: 5, hold: 5 });
    expect(grantFor({ limit: 10, want: 10, held: 0, others: [{ held: 5, want: 10 }] })).toEqual({ target: 5, hold: 5 });
  });

  it('lets a worker that stopped asking (want 0, nothing in flight) hold nothing', () => {
    expect(grantFor({ limit: 10, want: 0, held: 0, others: [{ held: 3, want: 3 }] })).toEqual({ target: 0, hold: 0 });
  });

  it('sends, in use, what is in flight or usable and asks for what was asked; unused, shrinks but still wants its share a moment', () => {
    const use = { hold: 10, inFlight: 3, usable: 8, asked: 40, lastTarget: 5, recentlyUsed: true, stopping: false, maxInFlight: 10 };
    expect(callFor(use)).toEqual({ held: 8, want: 10, ask: 10 });
    expect(callFor({ ...use, asked: 2 })).toEqual({ held: 8, want: 5, ask: 5 });
    expect(callFor({ ...use, inFlight: 9, usable: 5 })).toEqual({ held: 9, want: 10, ask: 10 });
    expect(callFor({ ...use, hold: 4 })).toEqual({ held: 4, want: 10, ask: 10 });
    // Unused a moment: down to what is in flight, still wanting the share it had (held by no one).
    expect(callFor({ ...use, asked: 0 })).toEqual({ held: 3, want: 5, ask: 3 });
    // Unused for a few seconds: wants only what is in flight.
    expect(callFor({ ...use, asked: 0, recentlyUsed: false })).toEqual({ held: 3, want: 3, ask: 3 });
    // Stopping: it keeps only its attempts in flight, and wants nothing.
    expect(callFor({ ...use, stopping: true })).toEqual({ held: 3, want: 0, ask: 0 });
  });

  it('leaves a worker that was busy a moment ago its share when another worker asks first', () => {
    // B went idle with 5 of 10 and still wants them; A asks first at the next burst.
    const a = grantFor({ limit: 10, want: 10, held: 0, others: [{ held: 0, want: 5 }] });
    expect(a).toEqual({ target: 5, hold: 5 });
    // B's idle renewal got no places: it holds none, only wants them.
    expect(grantFor({ limit: 10, want: 5, ask: 0, held: 0, others: [{ held: 5, want: 10 }] })).toEqual({ target: 0, hold: 0 });
    expect(grantFor({ limit: 10, want: 10, held: 0, others: [{ held: 5, want: 10 }] })).toEqual({ target: 5, hold: 5 });
  });

  it('never lets the holds add up past the larger of the limit and what they were, nor past maxInFlight, nor below what is in flight', () => {
    const MAX = 12;
    const broken: string[] = [];
    for (let seed = 1; seed <= 200; seed++) {
      const rand = random(seed);
      const workers = Array.from({ length: 1 + rand(4) }, () => ({ target: 0, hold: 0, inFlight: 0 }));
      const recorded = new Map<number, RecordedGrant>();
      let limit = 1 + rand(MAX);
      for (let step = 0; step < 300; step++) {
        if (rand(10) === 0) limit = Math.max(1, Math.min(MAX, rand(2) === 0 ? Math.floor(limit / 2) : limit + 1 + rand(3)));
        const w = rand(workers.length);
        const worker = workers[w];
        const usable = Math.min(worker.target, limit);
        // Attempts end at any time; new ones start only within the usable places.
        worker.inFlight = rand(Math.max(worker.inFlight, usable) + 1);
        const others = [...recorded].filter(([id]) => id !== w).map(([, grant]) => grant);
        const { held, want, ask } = callFor({
          hold: worker.hold,
          inFlight: worker.inFlight,
          usable,
          asked: rand(3) === 0 ? 0 : rand(MAX * 3),
          lastTarget: rand(MAX + 1),
          recentlyUsed: rand(2) === 0,
          stopping: rand(20) === 0,
          maxInFlight: MAX,
        });
        const before = [...recorded.values()].reduce((sum, g) => sum + g.held, 0);
        const grant = grantFor({ limit, want, ask, held, others });
        worker.target = grant.target;
        worker.hold = grant.hold;
        recorded.set(w, { held: grant.hold, want: Math.min(want, limit) });
        const after = [...recorded.values()].reduce((sum, g) => sum + g.held, 0);
        if (after > Math.max(before, limit) || after > MAX || worker.inFlight > worker.hold || grant.target > grant.hold) {
          broken.push(
            `seed ${seed} step ${step}: limit ${limit}, holds ${before} -> ${after}, in flight ${worker.inFlight}, ${JSON.stringify(grant)}`,
          );
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('settles two busy workers on half the limit each within a few renewals, the whole limit in use', () => {
    const recorded = new Map<string, RecordedGrant>();
    const workers = { a: { target: 0, hold: 0, inFlight: 0 }, b: { target: 0, hold: 0, inFlight: 0 } };
    const renew = (id: 'a' | 'b') => {
      const worker = workers[id];
      // Busy: every usable place fills.
      worker.inFlight = Math.max(Math.min(worker.inFlight, worker.hold), Math.min(worker.target, 10));
      const others = [...recorded].filter(([other]) => other !== id).map(([, g]) => g);
      const { held } = callFor({
        hold: worker.hold,
        inFlight: worker.inFlight,
        usable: worker.target,
        asked: 100,
        lastTarget: 0,
        recentlyUsed: true,
        stopping: false,
        maxInFlight: 10,
      });
      Object.assign(worker, grantFor({ limit: 10, want: 10, held, others }));
      recorded.set(id, { held: worker.hold, want: 10 });
      // The attempts beyond the target end before the next renewal.
      worker.inFlight = Math.min(worker.inFlight, worker.target);
    };
    renew('a');
    expect(workers.a.target).toBe(10);
    renew('b');
    expect(workers.b.target).toBe(0);
    for (let i = 0; i < 3; i++) {
      renew('a');
      renew('b');
    }
    expect([workers.a.target, workers.b.target]).toEqual([5, 5]);
    expect(workers.a.hold + workers.b.hold).toBe(10);
  });
});

describe('changes to the shared limit, gathered between grant calls', () => {
  const state: SharedLimit = { limit: 40, threshold: 200, lastCutAt: 100 };

  it('applies the cut first (when its attempt started after the last cut), then the grows, within [1, maxInFlight]', () => {
    expect(appliedChanges(state, { grow: 5, cut: { to: 20, startedAt: 150 } }, 400, 200)).toEqual({
      limit: 25,
      threshold: 20,
      lastCutAt: 400,
    });
    // The cut's attempt started before the last cut: an echo of it, and only the grows apply.
    expect(appliedChanges(state, { grow: 5, cut: { to: 20, startedAt: 50 } }, 400, 200)).toEqual({
      limit: 45,
      threshold: 200,
      lastCutAt: 100,
    });
    expect(appliedChanges(state, { grow: 500, cut: null }, 400, 200).limit).toBe(200);
    expect(appliedChanges(state, NO_CHANGES, 400, 30)).toEqual({ limit: 30, threshold: 30, lastCutAt: 100 });
  });

  it('gathers grows, and a cut that applies drops the grows gathered before it and keeps the deepest cut', () => {
    let pending: PendingChanges = NO_CHANGES;
    let known = state;
    const apply = (change: Parameters<typeof withChange>[2], startedAt: number, now: number) => {
      const next = withChange(known, pending, change, startedAt, now, 200);
      known = next.known;
      pending = next.pending;
      return next.cut;
    };
    expect(apply({ kind: 'grow', by: 3 }, 120, 130)).toBe(false);
    expect(pending).toEqual({ grow: 3, cut: null });
    expect(known.limit).toBe(43);
    expect(apply({ kind: 'cut', to: 20 }, 140, 150)).toBe(true);
    expect(pending).toEqual({ grow: 0, cut: { to: 20, startedAt: 140 } });
    expect(known).toEqual({ limit: 20, threshold: 20, lastCutAt: 150 });
    // An answer to an attempt started before that cut is its echo: nothing changes.
    expect(apply({ kind: 'cut', to: 21 }, 145, 160)).toBe(false);
    expect(known.limit).toBe(20);
    // One started after it cuts again; both travel as one cut, the deepest.
    expect(apply({ kind: 'cut', to: 10 }, 155, 170)).toBe(true);
    expect(pending).toEqual({ grow: 0, cut: { to: 10, startedAt: 155 } });
    expect(known.limit).toBe(10);
    // What the worker knows is what the store makes of the same changes.
    expect(appliedChanges(state, pending, 170, 200).limit).toBe(known.limit);
  });
});
