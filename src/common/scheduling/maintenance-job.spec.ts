import { MaintenanceJob } from './maintenance-job';

class CountingJob extends MaintenanceJob {
  passes = 0;

  constructor(runsHere: boolean) {
    super({ name: 'CountingJob', intervalMs: 100, runsHere, failure: 'counting failed' });
  }

  protected runPass(): Promise<void> {
    this.passes += 1;
    return Promise.resolve();
  }
}

describe('MaintenanceJob', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('passes every interval in the processes that run it, and never after shutdown', async () => {
    const job = new CountingJob(true);
    job.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(350);
    expect(job.passes).toBe(3);
    await job.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(1000);
    expect(job.passes).toBe(3);
  });

  it('never passes in a process of another role', async () => {
    const job = new CountingJob(false);
    job.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(1000);
    expect(job.passes).toBe(0);
    await job.onApplicationShutdown();
  });
});
