import { BREAKER_FAILURES_TO_OPEN, breakerBudget, breakerGate, breakerMessage } from './metadata-breaker.rules';

describe('the circuit breaker of a contract', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const later = new Date(now.getTime() + 30_000);
  const earlier = new Date(now.getTime() - 1);

  it('lets fetches through with no row, with fewer failures than the threshold, or never opened', () => {
    expect(breakerGate(null, now)).toEqual({ kind: 'closed' });
    expect(breakerGate({ failures: BREAKER_FAILURES_TO_OPEN - 1, openUntil: null, trialUntil: null }, now)).toEqual({ kind: 'closed' });
    expect(breakerGate({ failures: BREAKER_FAILURES_TO_OPEN, openUntil: null, trialUntil: null }, now)).toEqual({ kind: 'closed' });
  });

  it('holds fetches back while open', () => {
    expect(breakerGate({ failures: BREAKER_FAILURES_TO_OPEN, openUntil: later, trialUntil: null }, now)).toEqual({
      kind: 'open',
      until: later,
    });
  });

  it('once the pause is over, lets one trial through and holds the others back while it runs', () => {
    expect(breakerGate({ failures: BREAKER_FAILURES_TO_OPEN, openUntil: earlier, trialUntil: null }, now)).toEqual({ kind: 'trial' });
    expect(breakerGate({ failures: BREAKER_FAILURES_TO_OPEN + 3, openUntil: earlier, trialUntil: later }, now)).toEqual({
      kind: 'open',
      until: later,
    });
    // A trial whose worker died (its lease is over) is given to the next claim.
    expect(breakerGate({ failures: BREAKER_FAILURES_TO_OPEN, openUntil: earlier, trialUntil: earlier }, now)).toEqual({ kind: 'trial' });
  });

  it('names the breaker and when it lets a fetch through again', () => {
    expect(breakerMessage(later)).toBe(
      'the circuit breaker of this contract is open after 10 timeouts or connection failures in a row: ' +
        'its metadata fetches are paused until 2026-01-01T00:00:30.000Z',
    );
  });

  it('lets no more fetches run at once than the failures it still takes to open, and always one', () => {
    expect(breakerBudget(0)).toBe(BREAKER_FAILURES_TO_OPEN);
    expect(breakerBudget(7)).toBe(3);
    expect(breakerBudget(9)).toBe(1);
    // A trial, or a breaker another process let through: one at a time.
    expect(breakerBudget(BREAKER_FAILURES_TO_OPEN + 5)).toBe(1);
  });
});
