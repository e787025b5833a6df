import { relayJobs, RetryLaterError, retryBackoff } from './webhook-jobs';

describe('retryBackoff', () => {
  it('waits what the engine asked for', () => {
    expect([1, 2, 40].map((made) => retryBackoff(made, new RetryLaterError(5000, 'delivery failed')))).toEqual([5000, 5000, 5000]);
  });

  it('waits a second after an unexpected failure', () => {
    expect(retryBackoff(3, new Error('database down'))).toBe(1000);
  });
});

describe('job options', () => {
  it('keep only the last failure of a job, however often it is looked at again', () => {
    expect(relayJobs(['a', 'b']).map((job) => job.opts.stackTraceLimit)).toEqual([1]);
  });
});
