import { InFlightLimiter } from './in-flight-limiter';

describe('InFlightLimiter', () => {
  it('admits up to the limit per receiver and frees slots on release', () => {
    const limiter = new InFlightLimiter(2);
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.tryAcquire('a')).toBe(false);
    expect(limiter.tryAcquire('b')).toBe(true);
    limiter.release('a');
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.count('a')).toBe(2);
  });

  it('waits for a fast receiver only: the next freed slot goes to the first waiter', async () => {
    const limiter = new InFlightLimiter(1, { fastMs: 100, maxWaitMs: 1000 });
    expect(limiter.tryAcquire('a')).toBe(true);
    expect(limiter.isFast('a')).toBe(false); // nothing known yet
    limiter.release('a', 5);
    expect(limiter.isFast('a')).toBe(true);
    expect(limiter.tryAcquire('a')).toBe(true);
    const waiting = limiter.waitForSlot('a');
    limiter.release('a', 5);
    await expect(waiting).resolves.toBe(true);
    expect(limiter.count('a')).toBe(1);
    limiter.release('a', 2000);
    expect(limiter.isFast('a')).toBe(false);
  });

  it("takes this process's own delay off what it learns, so its load does not make a receiver look slow", () => {
    let ownDelay = 0;
    const limiter = new InFlightLimiter(1, { fastMs: 100, maxWaitMs: 1000, ownDelayMs: () => ownDelay });
    limiter.tryAcquire('a');
    limiter.release('a', 150);
    expect(limiter.isFast('a')).toBe(false);

    const busy = new InFlightLimiter(1, { fastMs: 100, maxWaitMs: 1000, ownDelayMs: () => ownDelay });
    ownDelay = 140; // the answer took 150 ms to be read, 140 of them waiting on this process
    busy.tryAcquire('a');
    busy.release('a', 150);
    expect(busy.isFast('a')).toBe(true);
    // A receiver slower than the delay is still slow.
    busy.tryAcquire('a');
    for (let i = 0; i < 20; i++) busy.release('a', 2000);
    expect(busy.isFast('a')).toBe(false);
  });

  it('hands a freed slot to a waiter only within the limit the releaser gives (an endpoint’s grant may have shrunk)', async () => {
    const limiter = new InFlightLimiter(10, { fastMs: 100, maxWaitMs: 1000 });
    expect(limiter.tryAcquire('a', 2)).toBe(true);
    expect(limiter.tryAcquire('a', 2)).toBe(true);
    let granted = false;
    const waiting = limiter.waitForSlot('a', 2).then((g) => (granted = g));
    // The limit is now 1: the first slot freed is not passed on, the second is.
    limiter.release('a', 5, 1);
    await Promise.resolve();
    expect([granted, limiter.count('a')]).toEqual([false, 1]);
    limiter.release('a', 5, 1);
    await expect(waiting).resolves.toBe(true);
    expect(limiter.count('a')).toBe(1);
  });

  it('gives up waiting after maxWaitMs', async () => {
    const limiter = new InFlightLimiter(1, { fastMs: 100, maxWaitMs: 20 });
    expect(limiter.tryAcquire('a')).toBe(true);
    await expect(limiter.waitForSlot('a')).resolves.toBe(false);
    limiter.release('a');
    expect(limiter.count('a')).toBe(0);
  });

  it('expects a receiver holding its requests without answering to take at least that long', () => {
    const limiter = new InFlightLimiter(10);
    const start = Date.now();
    expect(limiter.expectedMs('a', start)).toBe(0);
    limiter.tryAcquire('a');
    limiter.tryAcquire('a');
    expect(limiter.expectedMs('a', start + 10_000)).toBeGreaterThanOrEqual(9_000);
    limiter.release('a', 10_000); // its first answer: the typical duration now says it
    expect(limiter.expectedMs('a')).toBe(10_000);
    limiter.release('a', 10_000);
    expect(limiter.expectedMs('a', Date.now() + 60_000)).toBe(10_000); // nothing in flight: no silence to count
  });
});
