import { Periodic, PeriodicOptions } from './periodic';

const logger = () => ({ warn: jest.fn(), log: jest.fn() });

/** A run that stays in progress until `finish()`. */
function held() {
  let finish: () => void = () => undefined;
  const run = jest.fn(() => new Promise<void>((resolve) => (finish = resolve)));
  return { run, finish: () => finish() };
}

function periodic(options: Partial<PeriodicOptions> & Pick<PeriodicOptions, 'run'>) {
  return new Periodic({ intervalMs: 100, logger: logger(), failure: 'pass failed', ...options });
}

describe('Periodic', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('runs one interval after start, then an interval after each run ends', async () => {
    const run = jest.fn().mockResolvedValue(undefined);
    const loop = periodic({ run });
    loop.start();
    await jest.advanceTimersByTimeAsync(99);
    expect(run).toHaveBeenCalledTimes(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(250);
    expect(run).toHaveBeenCalledTimes(3);
    await loop.stop();
  });

  it('runs at once when asked to run at start', async () => {
    const run = jest.fn().mockResolvedValue(undefined);
    const loop = periodic({ run, runAtStart: true });
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(1);
    await loop.stop();
  });

  it('never starts a run while one is in progress, and stop waits for it and ends the loop', async () => {
    const { run, finish } = held();
    const loop = periodic({ run });
    loop.start();
    await jest.advanceTimersByTimeAsync(550);
    expect(run).toHaveBeenCalledTimes(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    await jest.advanceTimersByTimeAsync(1000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('runs again at once after a busy run, and after the pause a run asks for', async () => {
    const outcomes: unknown[] = ['busy', { againInMs: 30 }, 'idle', 'idle'];
    const at: number[] = [];
    const run = jest.fn(() => {
      at.push(Date.now());
      return Promise.resolve(outcomes.shift());
    });
    const loop = periodic({ run, runAtStart: true, intervalMs: 1000 });
    loop.start();
    await jest.advanceTimersByTimeAsync(1100);
    await loop.stop();
    const [first, afterBusy, afterPause, afterIdle] = at;
    expect(afterBusy - first).toBeLessThanOrEqual(1);
    expect(afterPause - afterBusy).toBe(30);
    expect(afterIdle - afterPause).toBe(1000);
  });

  it('reads an interval given as a function after each run', async () => {
    let interval = 100;
    const run = jest.fn(() => {
      interval = 500;
      return Promise.resolve();
    });
    const loop = periodic({ run, intervalMs: () => interval });
    loop.start();
    await jest.advanceTimersByTimeAsync(100);
    expect(run).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(499);
    expect(run).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(2);
    await loop.stop();
  });

  it('backs off after failures: doubling from the base, capped, jittered by ±20%', async () => {
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.5); // the middle: no jitter
    const at: number[] = [];
    const run = jest.fn(() => {
      at.push(Date.now());
      return Promise.reject(new Error('down'));
    });
    const runFor = async (backoff: { baseMs: number; maxMs: number }, ms: number) => {
      at.length = 0;
      const loop = periodic({ run, runAtStart: true, backoff });
      const start = Date.now();
      loop.start();
      await jest.advanceTimersByTimeAsync(ms);
      await loop.stop();
      return at.map((t) => t - start);
    };
    expect(await runFor({ baseMs: 100, maxMs: 350 }, 1000)).toEqual([0, 100, 300, 650, 1000]);
    random.mockReturnValue(0);
    expect(await runFor({ baseMs: 100, maxMs: 100 }, 80)).toEqual([0, 80]);
    random.mockReturnValue(0.9999);
    expect(await runFor({ baseMs: 100, maxMs: 100 }, 119)).toEqual([0]);
  });

  it('retries a failed run after the interval by default, and returns to the interval once it succeeds', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const run = jest.fn().mockRejectedValueOnce(new Error('boom')).mockRejectedValueOnce(new Error('boom')).mockResolvedValue(undefined);
    const loop = periodic({ run, intervalMs: 100 });
    loop.start();
    await jest.advanceTimersByTimeAsync(500);
    expect(run).toHaveBeenCalledTimes(5);
    await loop.stop();
  });

  it('logs the first failure in a row and then every N-th, and says when runs succeed again', async () => {
    const log = logger();
    const run = jest.fn().mockRejectedValue(new Error('boom'));
    const loop = periodic({
      run,
      runAtStart: true,
      logger: log,
      logEvery: 3,
      recovered: 'back to normal',
      backoff: { baseMs: 10, maxMs: 10 },
    });
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn).toHaveBeenLastCalledWith({ err: expect.any(Error), failures: 1, retryInMs: expect.any(Number) }, 'pass failed');
    while (run.mock.calls.length < 6) await jest.advanceTimersByTimeAsync(5);
    expect(log.warn.mock.calls.map(([context]) => (context as { failures: number }).failures)).toEqual([1, 3, 6]);
    run.mockResolvedValue(undefined);
    while (log.log.mock.calls.length === 0) await jest.advanceTimersByTimeAsync(5);
    expect(log.log).toHaveBeenCalledWith({ failures: 6 }, 'back to normal (after 6 failed run(s))');
    await loop.stop();
  });

  it('logs a one-line reason in place of the error when given one', async () => {
    const log = logger();
    const run = jest.fn().mockRejectedValue(new Error('first line\nsecond line with a URL'));
    const loop = periodic({ run, runAtStart: true, logger: log, reason: (e) => (e as Error).message.split('\n')[0] });
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(log.warn).toHaveBeenCalledWith({ failures: 1, retryInMs: expect.any(Number) }, 'pass failed: first line');
    await loop.stop();
  });

  it('says it is failing from a failed run until the next one succeeds', async () => {
    const run = jest.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue(undefined);
    const loop = periodic({ run, runAtStart: true, backoff: { baseMs: 100, maxMs: 100 } });
    expect(loop.failing).toBe(false);
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(loop.failing).toBe(true);
    await jest.advanceTimersByTimeAsync(150);
    expect(run).toHaveBeenCalledTimes(2);
    expect(loop.failing).toBe(false);
    await loop.stop();
  });

  it('runs at once when woken while waiting, once more right after the run when woken during it, and not after stop', async () => {
    const { run, finish } = held();
    const loop = periodic({ run, intervalMs: 10_000 });
    loop.wake();
    await jest.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(0); // not started yet
    loop.start();
    loop.wake();
    await jest.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(1);
    loop.wake();
    loop.wake();
    await jest.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(1); // no overlap
    finish();
    await jest.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(2); // one more, for both wakes
    finish();
    await jest.advanceTimersByTimeAsync(5000);
    expect(run).toHaveBeenCalledTimes(2);
    await loop.stop();
    loop.wake();
    await jest.advanceTimersByTimeAsync(20_000);
    expect(run).toHaveBeenCalledTimes(2);
  });
});
