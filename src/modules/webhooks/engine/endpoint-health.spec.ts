import { EndpointHealthTally } from './endpoint-health';

const at = (s: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, s));
const org = '01a20000-0000-7000-8000-000000000001';

describe('EndpointHealthTally', () => {
  it('counts a failing webhook once per retry cycle, every failed attempt in the run, and keeps the first failure time', () => {
    const tally = new EndpointHealthTally();
    tally.add({ endpointId: 'b', organizationId: org, succeeded: false, firstOfCycle: true }, at(1));
    tally.add({ endpointId: 'b', organizationId: org, succeeded: false, firstOfCycle: false }, at(2));
    tally.add({ endpointId: 'b', organizationId: org, succeeded: false, firstOfCycle: true }, at(3));
    expect(tally.take()).toEqual([
      { endpointId: 'b', organizationId: org, succeededAt: null, firstFailureAt: at(1), failedWebhooks: 2, consecutiveFailures: 3 },
    ]);
    expect(tally.take()).toEqual([]);
  });

  it('restarts the run after a success: only later failures count', () => {
    const tally = new EndpointHealthTally();
    tally.add({ endpointId: 'a', organizationId: org, succeeded: false, firstOfCycle: true }, at(1));
    tally.add({ endpointId: 'a', organizationId: org, succeeded: true, firstOfCycle: false }, at(2));
    expect(tally.take()).toEqual([
      { endpointId: 'a', organizationId: org, succeededAt: at(2), firstFailureAt: null, failedWebhooks: 0, consecutiveFailures: 0 },
    ]);
    tally.add({ endpointId: 'a', organizationId: org, succeeded: true, firstOfCycle: true }, at(3));
    tally.add({ endpointId: 'a', organizationId: org, succeeded: false, firstOfCycle: true }, at(4));
    expect(tally.take()).toEqual([
      { endpointId: 'a', organizationId: org, succeededAt: at(3), firstFailureAt: at(4), failedWebhooks: 1, consecutiveFailures: 1 },
    ]);
  });

  it('hands endpoints over in id order', () => {
    const tally = new EndpointHealthTally();
    for (const id of ['c', 'a', 'b']) tally.add({ endpointId: id, organizationId: org, succeeded: true, firstOfCycle: true }, at(1));
    expect(tally.take().map((c) => c.endpointId)).toEqual(['a', 'b', 'c']);
  });
});
