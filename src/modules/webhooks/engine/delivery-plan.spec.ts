import type { DeliveryTarget } from '../../webhook-endpoints/delivery-target.reader';
import { Admit, admissionDemand, deferredForOrder, PendingEvent, planDeliveries, PlanInput } from './delivery-plan';
import type { DeliveryState } from '../delivery-claim.repository';

const ORG = '0193a6c2-7d1e-7c3a-9f10-0a1b2c3d4e5f';
const OTHER_ENDPOINT = '0193a6c2-8000-7000-8000-000000000001';
const EVENT = '0193a6c2-9000-7000-8000-000000000001';
const WEBHOOK = '0193a6c2-9000-7000-8000-0000000000aa';
const NOW = new Date('2026-11-25T12:00:00.000Z');

function target(overrides: Partial<DeliveryTarget> = {}): DeliveryTarget {
  return {
    organizationId: ORG,
    endpointId: ORG,
    isDefault: true,
    url: 'https://example.com/hook',
    enabled: true,
    webhookTypes: ['custodialAccount'],
    contractAddresses: null,
    headers: {},
    rateLimitPerSecond: null,
    maxInFlight: null,
    secret: 'secret',
    secretError: null,
    previous: null,
    signingKeys: null,
    auth: null,
    tls: null,
    ordering: 'none',
    updatedAt: NOW,
    payload: 'thin',
    filter: null,
    retryScheduleMs: null,
    destination: null,
    ...overrides,
  };
}

const event: PendingEvent = {
  id: EVENT,
  organizationId: ORG,
  webhookType: 'custodialAccount',
  resourceType: 'Wallet',
  resourceId: '0193a6c2-a000-7000-8000-000000000001',
  action: 'create',
  changes: null,
  contractAddress: null,
  traceparent: null,
  createdAt: '2026-11-25 11:59:59.123456+00',
};

function state(overrides: Partial<DeliveryState> = {}): DeliveryState {
  return {
    id: WEBHOOK,
    organizationId: ORG,
    endpointId: ORG,
    eventId: EVENT,
    status: 'pending',
    payload: '{}',
    webhookType: 'custodialAccount',
    resourceType: 'Wallet',
    attemptCount: 1,
    cycleStartAttempt: 0,
    lastAttemptAt: '2026-11-25 11:59:00+00',
    nextAttemptAt: NOW.toISOString(),
    eventCreatedAt: event.createdAt,
    traceparent: null,
    sequence: null,
    ...overrides,
  };
}

const admitAll: Admit = () => 'afterClaim';

function input(overrides: Partial<PlanInput>): PlanInput {
  return {
    eventIds: [],
    webhookIds: [],
    states: new Map(),
    events: new Map(),
    endpoints: new Map([[ORG, [target()]]]),
    data: new Map(),
    now: NOW,
    furthestAttemptMs: 86_400_000,
    admit: admitAll,
    ...overrides,
  };
}

describe('delivery plan', () => {
  it('judges an event into one webhook per matching endpoint, each with its first attempt', () => {
    const endpoints = new Map([
      [
        ORG,
        [
          target(),
          target({ endpointId: OTHER_ENDPOINT, isDefault: false }),
          target({ endpointId: 'skipped', isDefault: false, webhookTypes: ['nft'] }),
        ],
      ],
    ]);
    const plan = planDeliveries(input({ eventIds: [EVENT], events: new Map([[EVENT, event]]), endpoints }));
    expect(plan.judge).toHaveLength(1);
    const [{ eventId, webhooks }] = plan.judge;
    expect(eventId).toBe(EVENT);
    expect(webhooks.map((w) => [w.row.endpointId, w.row.claimed, w.first?.attempt])).toEqual([
      [ORG, true, 1],
      [OTHER_ENDPOINT, true, 1],
    ]);
    // The default endpoint's webhook keeps the event's id; the body names the webhook's own id.
    expect(webhooks[0].row.id).toBe(EVENT);
    expect(webhooks[1].row.id).not.toBe(EVENT);
    expect(JSON.parse(webhooks[1].row.payload)).toEqual(expect.objectContaining({ id: webhooks[1].row.id, resourceType: 'Wallet' }));
    expect(plan.claim).toEqual([]);
  });

  it('creates a webhook unclaimed when its endpoint is not admitted, and asks admission once per attempt', () => {
    const asked: string[] = [];
    const admit: Admit = ({ endpointId }) => (asked.push(endpointId), 'none');
    const plan = planDeliveries(input({ eventIds: [EVENT, EVENT], events: new Map([[EVENT, event]]), admit }));
    expect(plan.judge[0].webhooks.map((w) => [w.row.claimed, w.first])).toEqual([[false, null]]);
    expect(asked).toEqual([ORG]);
  });

  it('admits an attempt that makes no request (a permanent failure) without asking, and says why', () => {
    const endpoints = new Map([[ORG, [target({ secret: null, secretError: 'cannot be opened' })]]]);
    const admit: Admit = () => {
      throw new Error('not asked');
    };
    const plan = planDeliveries(input({ eventIds: [EVENT], events: new Map([[EVENT, event]]), endpoints, admit }));
    expect(plan.judge[0].webhooks[0].first).toEqual(expect.objectContaining({ permanent: 'cannot be opened', receiver: null }));
  });

  it("carries the writing request's traceparent from the event to its webhooks, their first attempts and later ones", () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const judged = planDeliveries(input({ eventIds: [EVENT], events: new Map([[EVENT, { ...event, traceparent }]]) }));
    expect(judged.judge[0].webhooks.map((w) => [w.row.traceparent, w.first?.traceparent])).toEqual([[traceparent, traceparent]]);
    const retried = planDeliveries(input({ webhookIds: [WEBHOOK], states: new Map([[WEBHOOK, state({ traceparent })]]) }));
    expect(retried.claim[0].attempt.traceparent).toBe(traceparent);
    const untraced = planDeliveries(input({ eventIds: [EVENT], events: new Map([[EVENT, event]]) }));
    expect(untraced.judge[0].webhooks[0].row.traceparent).toBeNull();
  });

  it('leaves an event already judged to whoever judged it', () => {
    expect(planDeliveries(input({ eventIds: [EVENT] }))).toEqual({ judge: [], claim: [], settled: new Map() });
  });

  it('claims the due attempt of an existing webhook against the attempt count it read', () => {
    const plan = planDeliveries(input({ webhookIds: [WEBHOOK], states: new Map([[WEBHOOK, state()]]) }));
    expect(plan.claim).toEqual([
      {
        expectedAttemptCount: 1,
        attempt: expect.objectContaining({ id: WEBHOOK, receiver: ORG, permanent: null, previous: expect.any(Object) }),
      },
    ]);
  });

  it('settles what needs no attempt now: gone, finished, not due yet, or not admitted', () => {
    const later = new Date(NOW.getTime() + 60_000).toISOString();
    const states = new Map([
      ['finished', state({ id: 'finished', status: 'succeeded' })],
      ['later', state({ id: 'later', nextAttemptAt: later })],
      ['busy', state({ id: 'busy', endpointId: OTHER_ENDPOINT })],
    ]);
    const endpoints = new Map([[ORG, [target(), target({ endpointId: OTHER_ENDPOINT, isDefault: false })]]]);
    const admit: Admit = ({ endpointId }) => (endpointId === OTHER_ENDPOINT ? 'none' : 'afterClaim');
    const plan = planDeliveries(input({ webhookIds: ['gone', 'finished', 'later', 'busy'], states, endpoints, admit }));
    expect(Object.fromEntries(plan.settled)).toEqual({
      gone: { kind: 'done' },
      finished: { kind: 'done' },
      later: { kind: 'wait', delayMs: 60_000 },
      busy: { kind: 'busy' },
    });
    expect(plan.claim).toEqual([]);
  });

  it('attempts a webhook whose endpoint was deleted, as a permanent failure', () => {
    const plan = planDeliveries(input({ webhookIds: [WEBHOOK], states: new Map([[WEBHOOK, state({ endpointId: OTHER_ENDPOINT })]]) }));
    expect(plan.claim[0].attempt).toEqual(expect.objectContaining({ target: null, permanent: 'the webhook endpoint was deleted' }));
  });

  describe('an endpoint ordered per resource', () => {
    const endpoints = new Map([[ORG, [target(), target({ endpointId: OTHER_ENDPOINT, isDefault: false, ordering: 'resource' })]]]);

    it('gets webhooks created ordered and unclaimed, without asking admission; the unordered one is claimed as before', () => {
      const asked: string[] = [];
      const admit: Admit = ({ endpointId }) => (asked.push(endpointId), 'afterClaim');
      const plan = planDeliveries(input({ eventIds: [EVENT], events: new Map([[EVENT, event]]), endpoints, admit }));
      expect(plan.judge[0].ordered).toBe(true);
      expect(plan.judge[0].webhooks.map((w) => [w.row.endpointId, w.row.ordered, w.row.claimed, w.first?.attempt ?? null])).toEqual([
        [ORG, false, true, 1],
        [OTHER_ENDPOINT, true, false, null],
      ]);
      expect(asked).toEqual([ORG]);
    });

    it('says an event is not ordered when no ordered endpoint takes it', () => {
      const plan = planDeliveries(input({ eventIds: [EVENT], events: new Map([[EVENT, event]]) }));
      expect(plan.judge[0].ordered).toBe(false);
    });

    it("carries a webhook's sequence to its attempt", () => {
      const plan = planDeliveries(input({ webhookIds: [WEBHOOK], states: new Map([[WEBHOOK, state({ sequence: 7 })]]) }));
      expect(plan.claim[0].attempt.sequence).toBe(7);
    });
  });

  it('counts before planning, per endpoint, at least the attempts the plan asks admission for', () => {
    const endpoints = new Map([
      [
        ORG,
        [
          target({ maxInFlight: 3 }),
          target({ endpointId: 'ordered', isDefault: false, ordering: 'resource' }),
          target({ endpointId: 'other-type', isDefault: false, webhookTypes: ['nft'] }),
          target({ endpointId: 'filtered', isDefault: false, filter: { action: 'delete' } }),
          target({ endpointId: 'no-secret', isDefault: false, secret: null }),
        ],
      ],
    ]);
    const states = new Map([
      ['due', state({ id: 'due' })],
      ['later', state({ id: 'later', nextAttemptAt: new Date(NOW.getTime() + 60_000).toISOString() })],
      ['done', state({ id: 'done', status: 'succeeded' })],
      ['ordered-due', state({ id: 'ordered-due', endpointId: 'ordered' })],
    ]);
    const batch = input({
      eventIds: [EVENT],
      events: new Map([[EVENT, event]]),
      webhookIds: ['due', 'later', 'done', 'ordered-due', 'gone'],
      states,
      endpoints,
    });
    const asked = new Map<string, number>();
    planDeliveries({ ...batch, admit: ({ endpointId }) => (asked.set(endpointId, (asked.get(endpointId) ?? 0) + 1), 'afterClaim') });
    expect(Object.fromEntries(asked)).toEqual({ [ORG]: 2, ordered: 1 });
    // The event's filtered endpoint is counted (filters are judged when planning), the rest exactly.
    expect(Object.fromEntries(admissionDemand(batch))).toEqual({
      [ORG]: { maxInFlight: 3, attempts: 2 },
      ordered: { maxInFlight: null, attempts: 1 },
      filtered: { maxInFlight: null, attempts: 1 },
    });
  });

  describe('events held back for order', () => {
    const R1 = 'resource-1';
    const R2 = 'resource-2';
    const ev = (id: string, resourceId: string, createdAt: string) => ({ id, organizationId: ORG, resourceId, createdAt });

    it('holds back an event an older unjudged one comes before, and the later events of its resource in the batch', () => {
      const events = [
        ev('c', R1, '2026-11-25 12:00:00.000003+00'),
        ev('a', R1, '2026-11-25 12:00:00.000001+00'),
        ev('b', R1, '2026-11-25 12:00:00.000002+00'),
        ev('x', R2, '2026-11-25 12:00:00.000002+00'),
      ];
      expect(deferredForOrder(events, new Set(['b']))).toEqual(new Set(['b', 'c']));
      expect(deferredForOrder(events, new Set())).toEqual(new Set());
    });

    it('orders events of the same time by id', () => {
      const at = '2026-11-25 12:00:00.000001+00';
      expect(deferredForOrder([ev('b', R1, at), ev('a', R1, at)], new Set(['a']))).toEqual(new Set(['a', 'b']));
      expect(deferredForOrder([ev('b', R1, at), ev('a', R1, at)], new Set(['b']))).toEqual(new Set(['b']));
    });

    it('keeps resources of other organizations apart', () => {
      const events = [ev('a', R1, '2026-11-25 12:00:00+00'), { ...ev('b', R1, '2026-11-25 12:00:01+00'), organizationId: 'other' }];
      expect(deferredForOrder(events, new Set(['a']))).toEqual(new Set(['a']));
    });
  });
});
