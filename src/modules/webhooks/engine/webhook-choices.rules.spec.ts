import { buildWebhookBody, decideAfterAttempt, passesChoices, retryDelayMs, retryScheduleOf } from './webhook.rules';

// What an endpoint chose to receive (payload, content filter, retry schedule): its part of webhook.rules.ts.
// Any envelope: these cases are about what is added to it.
const source = { ...envelope('Transaction'), changes: null };

function envelope(resourceType: string) {
  const id = (n: number) => `01a20000-0000-7000-8000-00000000000${n}`;
  return {
    organizationId: id(1),
    action: 'create',
    id: id(2),
    resourceId: id(3),
    resourceType,
    createdAtUtc: '2026-11-22T01:25:42.123456+00:00',
  };
}

describe('what an endpoint chose to receive', () => {
  const ENDPOINT = '0193a6c2-8000-7000-8000-000000000001';
  const event = {
    webhookType: 'nft',
    resourceType: 'Token',
    action: 'update',
    organizationId: '0193a6c2-7d1e-7c3a-9f10-0a1b2c3d4e5f',
    resourceId: '0193a6c2-a000-7000-8000-000000000001',
    changes: { name: 'Vault 7' },
  };

  it('passes every event without a filter, and only matching events with one (data included)', () => {
    expect(passesChoices(event, { endpointId: ENDPOINT, filter: null }, null)).toBe(true);
    const filter = { action: 'update', data: { metadata: { name: { $startsWith: 'Vault' } } } };
    expect(passesChoices(event, { endpointId: ENDPOINT, filter }, { metadata: { name: 'Vault 7' } })).toBe(true);
    expect(passesChoices(event, { endpointId: ENDPOINT, filter }, { metadata: { name: 'Other' } })).toBe(false);
    expect(passesChoices(event, { endpointId: ENDPOINT, filter }, null)).toBe(false);
    expect(passesChoices({ ...event, resourceType: 'WebhookTest' }, { endpointId: ENDPOINT, filter: { action: 'x' } }, null)).toBe(true);
  });

  it('never sends an operational event to the endpoint it is about', () => {
    const disabled = { ...event, webhookType: 'operational', resourceType: 'WebhookEndpoint', action: 'disabled', resourceId: ENDPOINT };
    expect(passesChoices(disabled, { endpointId: ENDPOINT, filter: null }, null)).toBe(false);
    expect(passesChoices(disabled, { endpointId: event.organizationId, filter: null }, null)).toBe(true);
    const exhausted = {
      ...disabled,
      resourceType: 'Webhook',
      action: 'exhausted',
      resourceId: event.resourceId,
      changes: { endpointId: ENDPOINT },
    };
    expect(passesChoices(exhausted, { endpointId: ENDPOINT, filter: null }, null)).toBe(false);
    expect(passesChoices(exhausted, { endpointId: event.organizationId, filter: null }, null)).toBe(true);
  });

  it('adds data last to a full body only, and keeps a thin body byte for byte', () => {
    const thin = buildWebhookBody(source);
    expect(buildWebhookBody({ ...source, data: undefined })).toBe(thin);
    const full = buildWebhookBody({ ...source, data: { id: 'x' } });
    expect(full).toBe(`${thin.slice(0, -1)},"data":{"id":"x"}}`);
    expect(Object.keys(JSON.parse(buildWebhookBody({ ...source, data: null })) as object).at(-1)).toBe('data');
  });

  it("retries on the endpoint's own schedule with at most 10 % jitter, else the service's with 20 %", () => {
    expect(retryScheduleOf(null, [5000])).toEqual({ scheduleMs: [5000], jitter: 0.2 });
    expect(retryScheduleOf({ retryScheduleMs: null }, [5000])).toEqual({ scheduleMs: [5000], jitter: 0.2 });
    expect(retryScheduleOf({ retryScheduleMs: [1000, 2000] }, [5000])).toEqual({ scheduleMs: [1000, 2000], jitter: 0.1 });
    expect(retryDelayMs([1000, 2000], 2, () => 0, 0.1)).toBe(1800);
    expect(retryDelayMs([1000, 2000], 2, () => 1, 0.1)).toBe(2200);
    expect(retryDelayMs([1000, 2000], 3, () => 0.5, 0.1)).toBeNull();
    // entries + 1 attempts: the attempt after the last entry ends the webhook failed.
    const after = (attempt: number) =>
      decideAfterAttempt({ outcome: 'failure', permanent: false, attempt, cycleStartAttempt: 0 }, [1000, 2000], () => 0.5, 0.1);
    expect(after(2)).toEqual({ status: 'pending', delayMs: 2000 });
    expect(after(3)).toEqual({ status: 'failed' });
    // A longer Retry-After wins; a shorter one does not shorten the delay.
    expect(
      decideAfterAttempt(
        { outcome: 'failure', permanent: false, attempt: 1, cycleStartAttempt: 0, retryAfterMs: 5000 },
        [1000],
        () => 0.5,
        0.1,
      ),
    ).toEqual({ status: 'pending', delayMs: 5000 });
    expect(
      decideAfterAttempt(
        { outcome: 'failure', permanent: false, attempt: 1, cycleStartAttempt: 0, retryAfterMs: 10 },
        [1000],
        () => 0.5,
        0.1,
      ),
    ).toEqual({ status: 'pending', delayMs: 1000 });
  });
});
