import {
  attemptLeaseMs,
  attemptMayStart,
  buildWebhookBody,
  CLOCK_SKEW_TOLERANCE_MS,
  decideAfterAttempt,
  decideAttempt,
  decideEvent,
  permanentFailure,
  temporaryBlock,
  furthestLegitimateAttemptMs,
  isSuccessStatus,
  retryAfterMs,
  retryDelayMs,
  RETRY_AFTER_MAX_MS,
  webhookIdFor,
} from './webhook.rules';

const source = {
  organizationId: '01a20000-0000-7000-8000-000000000001',
  action: 'create',
  id: '01a20000-0000-7000-8000-000000000002',
  resourceId: '01a20000-0000-7000-8000-000000000003',
  resourceType: 'Transaction',
  createdAtUtc: '2026-11-22T01:25:42.123456+00:00',
  changes: null,
};

describe('buildWebhookBody', () => {
  it('writes the documented keys in the documented order with a +00:00 timestamp', () => {
    const body = buildWebhookBody(source);
    expect(Object.keys(JSON.parse(body))).toEqual([
      'organizationId',
      'action',
      'id',
      'resourceId',
      'resourceType',
      'createdAtUtc',
      'changes',
    ]);
    expect(JSON.parse(body).createdAtUtc).toBe('2026-11-22T01:25:42.123456+00:00');
    expect(JSON.parse(body).changes).toBeNull();
  });

  it('carries key/value changes', () => {
    expect(JSON.parse(buildWebhookBody({ ...source, action: 'update', changes: { name: 'New' } })).changes).toEqual({ name: 'New' });
  });
});

describe('retryDelayMs', () => {
  const schedule = [5000, 30000, 120000];

  it('follows the schedule after each failed attempt', () => {
    expect(retryDelayMs(schedule, 1, () => 0.5)).toBe(5000);
    expect(retryDelayMs(schedule, 2, () => 0.5)).toBe(30000);
    expect(retryDelayMs(schedule, 3, () => 0.5)).toBe(120000);
  });

  it('stops after the last delay', () => {
    expect(retryDelayMs(schedule, 4)).toBeNull();
    expect(retryDelayMs(schedule, 0)).toBeNull();
  });

  it('jitters within ±20%', () => {
    expect(retryDelayMs(schedule, 1, () => 0)).toBe(4000);
    expect(retryDelayMs(schedule, 1, () => 0.999999)).toBe(6000);
    for (let i = 0; i < 100; i += 1) {
      const delay = retryDelayMs(schedule, 2)!;
      expect(delay).toBeGreaterThanOrEqual(24000);
      expect(delay).toBeLessThanOrEqual(36000);
    }
  });

  it('gives the default schedule 11 attempts over about 47 hours', () => {
    const defaults = [5, 30, 120, 600, 1800, 3600, 10800, 21600, 43200, 86400].map((s) => s * 1000);
    let attempts = 1;
    let total = 0;
    for (let failed = 1; ; failed += 1) {
      const delay = retryDelayMs(defaults, failed, () => 0.5);
      if (delay === null) break;
      total += delay;
      attempts += 1;
    }
    expect(attempts).toBe(11);
    expect(total / 3_600_000).toBeCloseTo(46.9, 0);
  });
});

describe('isSuccessStatus', () => {
  it('accepts 2xx only', () => {
    expect([200, 201, 204, 299].every(isSuccessStatus)).toBe(true);
    expect([null, 199, 301, 302, 400, 404, 500].some((s) => isSuccessStatus(s))).toBe(false);
  });
});

describe('furthestLegitimateAttemptMs', () => {
  it('covers the longest jittered delay, the lease, the longest Retry-After or endpoint delay honoured, whichever is longest, plus the skew tolerance', () => {
    const schedule = [5000, 86_400_000];
    expect(furthestLegitimateAttemptMs(schedule, attemptLeaseMs(3000))).toBe(86_400_000 * 1.2 + CLOCK_SKEW_TOLERANCE_MS);
    // An endpoint's own schedule goes up to a day with +10 %.
    expect(furthestLegitimateAttemptMs([5000], attemptLeaseMs(3000))).toBe(Math.ceil(RETRY_AFTER_MAX_MS * 1.1) + CLOCK_SKEW_TOLERANCE_MS);
    for (let i = 0; i < 100; i += 1) expect(retryDelayMs(schedule, 2)).toBeLessThanOrEqual(furthestLegitimateAttemptMs(schedule, 0));
  });
});

describe('attemptMayStart', () => {
  it('sends on a claim only while its lease still covers the timeout and the writing of the result', () => {
    const claimedAt = 1_000_000;
    const leaseUntil = claimedAt + attemptLeaseMs(3000);
    // Started at once, or after waiting up to one timeout: the request and its result fit.
    expect(attemptMayStart(leaseUntil, claimedAt, 3000)).toBe(true);
    expect(attemptMayStart(leaseUntil, claimedAt + 3000, 3000)).toBe(true);
    // Later, another worker could take the webhook over while this request is in flight.
    expect(attemptMayStart(leaseUntil, claimedAt + 3001, 3000)).toBe(false);
    expect(attemptMayStart(leaseUntil, leaseUntil + 1, 3000)).toBe(false);
  });
});

describe('decideEvent', () => {
  const target = { url: 'https://hooks.example.com/in', enabled: true, webhookTypes: ['nft'], secret: 's', secretError: null };
  const nft = { webhookType: 'nft', resourceType: 'Token' };

  it('delivers an event of a subscribed type while enabled', () => {
    expect(decideEvent(nft, target)).toEqual({ kind: 'deliver' });
  });

  it('skips while disabled, for a type not subscribed, or without a url', () => {
    expect(decideEvent(nft, { ...target, enabled: false })).toEqual({ kind: 'skip' });
    expect(decideEvent({ webhookType: 'kyc', resourceType: 'Kyc' }, target)).toEqual({ kind: 'skip' });
    expect(decideEvent(nft, { ...target, url: null })).toEqual({ kind: 'skip' });
  });

  it('delivers a test webhook whatever the switch and the filter say, but not without a url', () => {
    const test = { webhookType: 'kyc', resourceType: 'WebhookTest' };
    expect(decideEvent(test, { ...target, enabled: false })).toEqual({ kind: 'deliver' });
    expect(decideEvent(test, { ...target, url: null })).toEqual({ kind: 'skip' });
  });

  describe('with a contract filter', () => {
    const filtered = {
      ...target,
      webhookTypes: ['nft', 'transaction', 'custodialAccount'],
      contractAddresses: ['0xaaaa000000000000000000000000000000000001'],
    };

    it('delivers nft and transaction events of a listed contract only, in any letter case', () => {
      expect(decideEvent({ ...nft, contractAddress: '0xaaaa000000000000000000000000000000000001' }, filtered)).toEqual({ kind: 'deliver' });
      expect(
        decideEvent(
          { webhookType: 'transaction', resourceType: 'Transaction', contractAddress: '0xAAAA000000000000000000000000000000000001' },
          filtered,
        ),
      ).toEqual({ kind: 'deliver' });
      expect(decideEvent({ ...nft, contractAddress: '0xbbbb000000000000000000000000000000000002' }, filtered)).toEqual({ kind: 'skip' });
      expect(decideEvent({ webhookType: 'transaction', resourceType: 'Transaction', contractAddress: null }, filtered)).toEqual({
        kind: 'skip',
      });
    });

    it('leaves the other types alone, and still needs the type subscribed', () => {
      expect(decideEvent({ webhookType: 'custodialAccount', resourceType: 'Wallet', contractAddress: null }, filtered)).toEqual({
        kind: 'deliver',
      });
      expect(
        decideEvent(
          { ...nft, contractAddress: '0xaaaa000000000000000000000000000000000001' },
          { ...filtered, webhookTypes: ['transaction'] },
        ),
      ).toEqual({ kind: 'skip' });
    });
  });
});

describe('webhookIdFor', () => {
  const eventId = '019ab5c2-3e4f-7a00-8b11-223344556677';

  it("is the event's own id for the default endpoint", () => {
    expect(webhookIdFor(eventId, '01a20000-0000-7000-8000-000000000001', true)).toBe(eventId);
  });

  it('is a stable UUIDv7 per endpoint carrying the event time, so the log keeps its order', () => {
    const a = webhookIdFor(eventId, '019ab5c2-0000-7000-8000-00000000000a', false);
    const b = webhookIdFor(eventId, '019ab5c2-0000-7000-8000-00000000000b', false);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    expect(a).not.toBe(eventId);
    expect(webhookIdFor(eventId, '019ab5c2-0000-7000-8000-00000000000a', false)).toBe(a);
    expect(a.slice(0, 13)).toBe(eventId.slice(0, 13));
    const later = webhookIdFor('019ab5c2-3e50-7a00-8b11-223344556677', '019ab5c2-0000-7000-8000-00000000000a', false);
    expect(later > a).toBe(true);
  });
});

describe('decideAttempt', () => {
  const furthest = 60_000;
  const now = Date.parse('2026-11-23T10:00:00Z');

  it('attempts a pending webhook that is due, or has no time set', () => {
    expect(decideAttempt({ status: 'pending', nextAttemptAt: new Date(now - 1) }, now, furthest)).toEqual({ kind: 'attempt' });
    expect(decideAttempt({ status: 'pending', nextAttemptAt: null }, now, furthest)).toEqual({ kind: 'attempt' });
  });

  it('waits for a pending webhook due later, and does nothing with a finished one', () => {
    expect(decideAttempt({ status: 'pending', nextAttemptAt: new Date(now + 5000) }, now, furthest)).toEqual({
      kind: 'wait',
      dueInMs: 5000,
    });
    expect(decideAttempt({ status: 'succeeded', nextAttemptAt: null }, now, furthest)).toEqual({ kind: 'none' });
    expect(decideAttempt({ status: 'failed', nextAttemptAt: null }, now, furthest)).toEqual({ kind: 'none' });
  });

  it('takes a time further ahead than anything scheduled as written by a skewed clock: due now', () => {
    expect(decideAttempt({ status: 'pending', nextAttemptAt: new Date(now + furthest + 1) }, now, furthest)).toEqual({ kind: 'attempt' });
  });
});

describe('permanentFailure and temporaryBlock', () => {
  const target = { url: 'https://hooks.example.com/in', enabled: true, webhookTypes: ['nft'], secret: 's', secretError: null };

  it('names what can never succeed as configured', () => {
    expect(permanentFailure(target)).toBeNull();
    expect(permanentFailure(null)).toMatch(/endpoint was deleted/);
    expect(permanentFailure({ ...target, url: null })).toMatch(/no url/);
    expect(permanentFailure({ ...target, secret: null })).toMatch(/no shared secret/);
    expect(permanentFailure({ ...target, secret: null, secretError: 'the shared secret cannot be opened: wrong key' })).toMatch(
      /cannot be opened/,
    );
  });

  it('treats a disabled configuration as temporary, except for a test webhook', () => {
    expect(temporaryBlock({ ...target, enabled: false }, 'Token')).toMatch(/disabled/);
    expect(temporaryBlock({ ...target, enabled: false }, 'WebhookTest')).toBeNull();
    expect(temporaryBlock(target, 'Token')).toBeNull();
  });
});

describe('decideAfterAttempt', () => {
  const schedule = [100, 200, 400];
  const fixed = () => 0.5;

  it('succeeds on success, and ends failed at once after a permanent error', () => {
    expect(decideAfterAttempt({ outcome: 'success', permanent: false, attempt: 1, cycleStartAttempt: 0 }, schedule, fixed)).toEqual({
      status: 'succeeded',
    });
    expect(decideAfterAttempt({ outcome: 'blocked', permanent: true, attempt: 1, cycleStartAttempt: 0 }, schedule, fixed)).toEqual({
      status: 'failed',
    });
  });

  it('schedules the next attempt of the cycle, and fails once the schedule is used up', () => {
    expect(decideAfterAttempt({ outcome: 'http_error', permanent: false, attempt: 1, cycleStartAttempt: 0 }, schedule, fixed)).toEqual({
      status: 'pending',
      delayMs: 100,
    });
    expect(decideAfterAttempt({ outcome: 'timeout', permanent: false, attempt: 3, cycleStartAttempt: 0 }, schedule, fixed)).toEqual({
      status: 'pending',
      delayMs: 400,
    });
    expect(decideAfterAttempt({ outcome: 'timeout', permanent: false, attempt: 4, cycleStartAttempt: 0 }, schedule, fixed)).toEqual({
      status: 'failed',
    });
    // A redelivery starts a new cycle at the attempt count it found.
    expect(decideAfterAttempt({ outcome: 'http_error', permanent: false, attempt: 5, cycleStartAttempt: 4 }, schedule, fixed)).toEqual({
      status: 'pending',
      delayMs: 100,
    });
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-26T10:00:00Z');

  it('reads delta-seconds on a 429 or a 503', () => {
    expect(retryAfterMs(429, '2', now)).toBe(2000);
    expect(retryAfterMs(503, ' 120 ', now)).toBe(120_000);
    expect(retryAfterMs(503, '0', now)).toBe(0);
  });

  it('reads an HTTP date, in the standard form and the obsolete ones', () => {
    expect(retryAfterMs(503, 'Thu, 26 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs(429, 'Thursday, 26-Nov-26 10:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs(429, 'Thu Nov 26 10:00:05 2026', now)).toBe(5000);
  });

  it('asks for no wait when the date has passed', () => {
    expect(retryAfterMs(503, 'Thu, 26 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('counts anything past 24 hours as 24 hours', () => {
    expect(retryAfterMs(503, String(25 * 3600), now)).toBe(RETRY_AFTER_MAX_MS);
    expect(retryAfterMs(503, '99999999999999999999', now)).toBe(RETRY_AFTER_MAX_MS);
    expect(retryAfterMs(429, 'Sat, 26 Dec 2026 10:00:00 GMT', now)).toBe(RETRY_AFTER_MAX_MS);
  });

  it('ignores it on other statuses, and ignores values that are neither form', () => {
    for (const status of [null, 200, 500, 502, 504, 400]) expect(retryAfterMs(status, '30', now)).toBeNull();
    for (const value of [undefined, null, '', '-5', '1.5', '+3', '0x10', 'soon', '12 seconds'])
      expect(retryAfterMs(503, value, now)).toBeNull();
  });
});

describe('decideAfterAttempt with a Retry-After', () => {
  const schedule = [100, 200, 400];
  const fixed = () => 1; // the most jitter the schedule adds: 120 ms after the first failure

  it('waits at least as long as the receiver asked, adding no jitter to that', () => {
    expect(
      decideAfterAttempt(
        { outcome: 'http_error', permanent: false, attempt: 1, cycleStartAttempt: 0, retryAfterMs: 2000 },
        schedule,
        fixed,
      ),
    ).toEqual({ status: 'pending', delayMs: 2000 });
  });

  it('keeps the schedule when it already waits longer, and still fails when the schedule is used up', () => {
    expect(
      decideAfterAttempt({ outcome: 'http_error', permanent: false, attempt: 1, cycleStartAttempt: 0, retryAfterMs: 50 }, schedule, fixed),
    ).toEqual({ status: 'pending', delayMs: 120 });
    expect(
      decideAfterAttempt(
        { outcome: 'http_error', permanent: false, attempt: 4, cycleStartAttempt: 0, retryAfterMs: 2000 },
        schedule,
        fixed,
      ),
    ).toEqual({ status: 'failed' });
  });
});
