import { EventLoopLag } from './event-loop-lag';

/** Keeps the event loop busy for `ms` milliseconds. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 15));

describe('EventLoopLag', () => {
  let lag: EventLoopLag;
  afterEach(() => lag.stop());

  it('reads 0 before any window has closed', () => {
    lag = new EventLoopLag(10, 60_000);
    expect(lag.recentMs()).toBe(0);
  });

  it('reports the delay of a loop kept busy, and forgets it once the loop keeps up again', async () => {
    lag = new EventLoopLag(10, 60_000);
    // The sampling timer can only run between the blocks, each time about 200 ms late.
    for (let i = 0; i < 5; i++) {
      block(200);
      await tick();
    }
    lag.roll();
    const busy = lag.recentMs();
    expect(busy).toBeGreaterThan(50);

    // A window in which the loop had nothing else to do: its timer ran on time.
    for (let i = 0; i < 10; i++) await tick();
    lag.roll();
    expect(lag.recentMs()).toBeLessThan(busy / 2);
  });
});
