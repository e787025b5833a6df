import { Periodic } from './periodic';

describe('Periodic', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs on every tick, skips a tick while a run is still going, and stop waits for that run', async () => {
    let finish: () => void = () => undefined;
    const run = jest.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    const periodic = new Periodic({ intervalMs: 100, run, logger: { warn: jest.fn() }, failure: 'x' });
    periodic.start();
    await jest.advanceTimersByTimeAsync(350);
    expect(run).toHaveBeenCalledTimes(1);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    await jest.advanceTimersByTimeAsync(500);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('logs a failed run and runs again at the next tick', async () => {
    const warn = jest.fn();
    const run = jest.fn().mockRejectedValueOnce(new Error('boom')).mockResolvedValue(undefined);
    const periodic = new Periodic({ intervalMs: 100, run, logger: { warn }, failure: 'pass failed' });
    periodic.start();
    await jest.advanceTimersByTimeAsync(250);
    expect(warn).toHaveBeenCalledWith({ err: expect.any(Error) }, 'pass failed');
    expect(run).toHaveBeenCalledTimes(2);
    await periodic.stop();
  });
});
