import { afterPoll, afterPush, NOTHING_PUSHED, pushesStopped, resubscribeDelayMs } from './new-heads.rules';

describe('resubscribeDelayMs', () => {
  const middle = () => 0.5; // no jitter

  it('waits a second after the first loss, doubling for each failure in a row up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => resubscribeDelayMs(n, middle))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('jitters by ±20%', () => {
    expect(resubscribeDelayMs(1, () => 0)).toBe(800);
    expect(resubscribeDelayMs(1, () => 0.9999)).toBe(1_200);
    expect(resubscribeDelayMs(40, () => 0)).toBe(24_000);
  });

  it('takes no failure count as the first', () => {
    expect(resubscribeDelayMs(0, middle)).toBe(1_000);
  });
});

describe('the push watch', () => {
  const STALE = 30_000;

  it('takes the first poll after subscribing as its baseline: a chain without new blocks is never stale', () => {
    let watch = afterPoll(NOTHING_PUSHED, 100, 0);
    expect(watch).toEqual({ pushed: 100, behindSince: null });
    for (const at of [10_000, 60_000, 600_000]) watch = afterPoll(watch, 100, at);
    expect(pushesStopped(watch, 600_000, STALE)).toBe(false);
  });

  it('is stale once the polls have found newer heads for the whole wait and nothing was pushed', () => {
    let watch = afterPush(NOTHING_PUSHED, 100);
    watch = afterPoll(watch, 101, 1_000);
    expect(watch.behindSince).toBe(1_000);
    watch = afterPoll(watch, 103, 20_000);
    expect(watch.behindSince).toBe(1_000); // since the first poll that found it behind
    expect(pushesStopped(watch, 30_999, STALE)).toBe(false);
    expect(pushesStopped(watch, 31_000, STALE)).toBe(true);
  });

  it('is not stale while pushes keep coming, even a little behind the polls', () => {
    let watch = afterPush(NOTHING_PUSHED, 100);
    watch = afterPoll(watch, 101, 1_000);
    watch = afterPush(watch, 101);
    expect(watch).toEqual({ pushed: 101, behindSince: null });
    watch = afterPoll(watch, 102, 40_000);
    expect(pushesStopped(watch, 40_000, STALE)).toBe(false);
  });

  it('keeps the highest head pushed (a reorg may push a lower one) and is caught up by a poll at or below it', () => {
    let watch = afterPush(afterPush(NOTHING_PUSHED, 100), 98);
    expect(watch.pushed).toBe(100);
    watch = afterPoll(watch, 101, 0);
    watch = afterPoll(watch, 99, 5_000);
    expect(watch.behindSince).toBeNull();
  });
});
