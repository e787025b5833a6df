import { relayJobs, RetryLaterError, retryBackoff, stageOf } from './webhook-jobs';

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

describe('stageOf', () => {
  it('takes each stage by its own name and payload', () => {
    expect(stageOf('judge-events', { eventIds: ['e1', 'e2'] })).toEqual({ stage: 'judgeEvents', job: { eventIds: ['e1', 'e2'] } });
    expect(stageOf('attempt-webhook', { webhookId: 'w1' })).toEqual({ stage: 'attemptWebhook', job: { webhookId: 'w1' } });
  });

  it('sends a legacy deliver job to the stage its payload names', () => {
    expect(stageOf('deliver', { eventIds: ['e1'] })).toEqual({ stage: 'judgeEvents', job: { eventIds: ['e1'] } });
    expect(stageOf('deliver', { webhookId: 'w1' })).toEqual({ stage: 'attemptWebhook', job: { webhookId: 'w1' } });
  });

  it('takes no job whose name and payload do not match a stage', () => {
    expect(stageOf('judge-events', { webhookId: 'w1' })).toBeNull();
    expect(stageOf('attempt-webhook', { eventIds: ['e1'] })).toBeNull();
    expect(stageOf('deliver', {})).toBeNull();
    expect(stageOf('something-else', { webhookId: 'w1' })).toBeNull();
  });

  it('names its jobs by stage', () => {
    expect(relayJobs(['a']).map((job) => [job.name, job.data])).toEqual([['judge-events', { eventIds: ['a'] }]]);
  });
});
