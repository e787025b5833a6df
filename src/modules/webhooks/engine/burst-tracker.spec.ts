import { BurstTracker } from './burst-tracker';

describe('BurstTracker', () => {
  it('keeps an organization in the main lane up to the threshold, then moves the rest to bulk', () => {
    let now = 1_000_000;
    const tracker = new BurstTracker(3, 10_000, () => now);
    expect(['a', 'a', 'a', 'a', 'a'].map((org) => tracker.lane(org))).toEqual(['main', 'main', 'main', 'bulk', 'bulk']);
    // Another organization is unaffected by the first one's burst.
    expect(tracker.lane('b')).toBe('main');
    now += 11_000;
    expect(tracker.lane('a')).toBe('main');
  });

  it('counts within a sliding window', () => {
    let now = 5_000_000;
    const tracker = new BurstTracker(2, 3_000, () => now);
    tracker.lane('a');
    now += 1000;
    tracker.lane('a');
    now += 1000;
    expect(tracker.lane('a')).toBe('bulk');
    now += 2000; // the first two buckets have left the window
    expect(tracker.lane('a')).toBe('main');
  });
});
