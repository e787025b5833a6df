import { formatDbTimestamp } from '../../../common/time';
import type { UnjudgedEvent } from '../../domain-events/domain-event.store';
import type { DeliveryTarget } from '../../webhook-endpoints/delivery-target.reader';
import type { DeliveryState, NewDelivery } from '../delivery-claim.repository';
import { buildWebhookBody, decideAttempt, decideEvent, passesChoices, permanentFailure, webhookIdFor } from './webhook.rules';

/** An event the engine has yet to judge into webhooks. */
export type PendingEvent = UnjudgedEvent;

/**
 * Whether an attempt may be made for an endpoint now: 'afterClaim', take a slot of the
 * endpoint's concurrency once the attempt is claimed (so a slot is held only while its request is
 * in flight); 'none', not now (the webhook is looked at again shortly without spending an attempt).
 * Attempts that make no request (a permanent failure) are always admitted and take no slot.
 */
export type Admission = 'afterClaim' | 'none';

/**
 * The admission policy of one batch, asked once per attempt the batch would make, in order. The
 * seam for scheduling: today per endpoint (a slow endpoint at its limit waits); a per-organization
 * share slots in here without touching the plan or the executor.
 */
export type Admit = (target: Pick<DeliveryTarget, 'organizationId' | 'endpointId'>) => Admission;

/** One attempt the executor is to make (its number is known once claimed). */
export interface PlannedAttempt {
  id: string;
  eventId: string;
  organizationId: string;
  endpointId: string;
  attempt: number;
  cycleStartAttempt: number;
  payload: string;
  eventCreatedAt: Date;
  webhookType: string;
  resourceType: string;
  /** The W3C traceparent of the request that wrote the event, for the attempt's span to link to; null when untraced. */
  traceparent: string | null;
  /** Its place among the webhooks of its resource to an ordered endpoint (x-service-webhook-sequence); null when unordered. */
  sequence: number | null;
  /** Null when the endpoint no longer exists (a permanent failure). */
  target: DeliveryTarget | null;
  /** The endpoint whose concurrency slot the attempt takes; null when no request is made. */
  receiver: string | null;
  /** Set when the attempt cannot succeed as configured: recorded failed without a request. */
  permanent: string | null;
  /** The times before the claim, to give the claim back if no slot frees up. */
  previous: { lastAttemptAt: string | null; nextAttemptAt: string | Date | null };
}

/** What a job's id comes to without an attempt of its own now. */
export type Settled = { kind: 'done' } | { kind: 'busy' } | { kind: 'wait'; delayMs: number };

export interface DeliveryPlan {
  /**
   * Events to judge, each with the webhooks it creates (one per matching endpoint) and, if
   * admitted, their first attempt. A webhook to an endpoint ordered per resource is never sent at
   * once: it waits for its predecessors, which only the claim can tell (`first` null, `ordered`).
   */
  judge: { eventId: string; ordered: boolean; webhooks: { row: NewDelivery; first: PlannedAttempt | null }[] }[];
  /** Existing webhooks whose next attempt is due and admitted: claim it (version = the attempt count read), then make it. */
  claim: { expectedAttemptCount: number; attempt: PlannedAttempt }[];
  /** Webhooks with nothing to do now, or that must wait. */
  settled: Map<string, Settled>;
}

export interface PlanInput {
  eventIds: readonly string[];
  webhookIds: readonly string[];
  /** The webhooks among `webhookIds` that exist. */
  states: ReadonlyMap<string, DeliveryState>;
  /** The events among `eventIds` still to judge. */
  events: ReadonlyMap<string, PendingEvent>;
  /** Every endpoint of each organization concerned, read fresh for this batch. */
  endpoints: ReadonlyMap<string, DeliveryTarget[]>;
  /** The resource of each event some endpoint filters on or takes full bodies of (see needsResource). */
  data: ReadonlyMap<string, unknown>;
  now: Date;
  /** Past this, a next attempt was written by a skewed clock and is due now (see decideAttempt). */
  furthestAttemptMs: number;
  admit: Admit;
}

/**
 * From what a batch of jobs read to what it must write and send: pure, so every branch of the
 * delivery engine's decisions is unit-tested (delivery-plan.spec.ts). Events are judged into one
 * webhook per matching endpoint; each webhook, new or existing, is then treated the same way:
 * an attempt if due and admitted, otherwise settled (done, busy, or wait).
 */
export function planDeliveries(input: PlanInput): DeliveryPlan {
  const plan: DeliveryPlan = { judge: [], claim: [], settled: new Map() };
  const { now, admit } = input;

  for (const eventId of new Set(input.eventIds)) {
    const event = input.events.get(eventId);
    if (!event) continue; // judged already (by another worker, or before a redelivered job): its webhooks carry on
    const webhooks: DeliveryPlan['judge'][number]['webhooks'] = [];
    let eventOrdered = false;
    for (const target of input.endpoints.get(event.organizationId) ?? []) {
      if (decideEvent(event, target).kind === 'skip') continue;
      const data = input.data.get(eventId) ?? null;
      if (!passesChoices(event, target, data)) continue;
      const ordered = target.ordering === 'resource';
      eventOrdered ||= ordered;
      const id = webhookIdFor(eventId, target.endpointId, target.isDefault);
      const payload = buildWebhookBody({
        organizationId: event.organizationId,
        action: event.action,
        id,
        resourceId: event.resourceId,
        resourceType: event.resourceType,
        createdAtUtc: formatDbTimestamp(event.createdAt),
        changes: event.changes,
        data: target.payload === 'full' ? data : undefined,
      });
      const attempt = plannedAttempt(
        {
          id,
          eventId,
          organizationId: event.organizationId,
          endpointId: target.endpointId,
          payload,
          webhookType: event.webhookType,
          resourceType: event.resourceType,
          traceparent: event.traceparent,
          sequence: null,
        },
        event.createdAt,
        target,
        { lastAttemptAt: null, nextAttemptAt: now },
        // Not even asked for a slot: an ordered webhook is made due and left to the claim.
        ordered ? () => 'none' : admit,
      );
      const first = attempt === null || ordered ? null : { ...attempt, attempt: 1, cycleStartAttempt: 0 };
      webhooks.push({
        row: {
          ...event,
          id,
          eventId,
          endpointId: target.endpointId,
          payload,
          eventCreatedAt: event.createdAt,
          claimed: first !== null,
          ordered,
        },
        first,
      });
    }
    plan.judge.push({ eventId, ordered: eventOrdered, webhooks });
  }

  for (const id of new Set(input.webhookIds)) {
    const state = input.states.get(id);
    if (!state) {
      plan.settled.set(id, { kind: 'done' }); // pruned: nothing to send
      continue;
    }
    const decision = decideAttempt(
      { status: state.status, nextAttemptAt: state.nextAttemptAt ? new Date(state.nextAttemptAt) : null },
      now.getTime(),
      input.furthestAttemptMs,
    );
    if (decision.kind !== 'attempt') {
      plan.settled.set(id, decision.kind === 'none' ? { kind: 'done' } : { kind: 'wait', delayMs: decision.dueInMs });
      continue;
    }
    // Read at send time, never stored in the job: the newest url and secret always apply.
    const target = (input.endpoints.get(state.organizationId) ?? []).find((e) => e.endpointId === state.endpointId) ?? null;
    const attempt = plannedAttempt(
      state,
      state.eventCreatedAt,
      target,
      { lastAttemptAt: state.lastAttemptAt, nextAttemptAt: state.nextAttemptAt },
      admit,
    );
    if (attempt === null) plan.settled.set(id, { kind: 'busy' });
    else plan.claim.push({ expectedAttemptCount: state.attemptCount, attempt });
  }
  return plan;
}

/** Per endpoint: its maxInFlight and how many attempts a batch may ask admission for. */
export type AdmissionDemand = Map<string, { maxInFlight: number | null; attempts: number }>;

/**
 * What a batch may ask admission for, per endpoint, before it is planned: each due webhook, and
 * for each event every endpoint it may go to at once (ordered endpoints leave the first attempt
 * to the claim; content filters are not judged here, so this may count more than planDeliveries
 * asks for, never less). Attempts that make no request (a permanent failure) take no slot and are
 * not counted. The executor makes sure of the endpoints' in-flight grants with it.
 */
export function admissionDemand(
  input: Pick<PlanInput, 'eventIds' | 'webhookIds' | 'states' | 'events' | 'endpoints' | 'now' | 'furthestAttemptMs'>,
): AdmissionDemand {
  const demand: AdmissionDemand = new Map();
  const add = (target: DeliveryTarget) => {
    if (permanentFailure(target)) return;
    const known = demand.get(target.endpointId);
    if (known) known.attempts += 1;
    else demand.set(target.endpointId, { maxInFlight: target.maxInFlight, attempts: 1 });
  };
  for (const eventId of new Set(input.eventIds)) {
    const event = input.events.get(eventId);
    if (!event) continue;
    for (const target of input.endpoints.get(event.organizationId) ?? []) {
      if (target.ordering !== 'resource' && decideEvent(event, target).kind === 'deliver') add(target);
    }
  }
  for (const id of new Set(input.webhookIds)) {
    const state = input.states.get(id);
    if (!state) continue;
    const due = { status: state.status, nextAttemptAt: state.nextAttemptAt ? new Date(state.nextAttemptAt) : null };
    if (decideAttempt(due, input.now.getTime(), input.furthestAttemptMs).kind !== 'attempt') continue;
    const target = (input.endpoints.get(state.organizationId) ?? []).find((e) => e.endpointId === state.endpointId);
    if (target) add(target);
  }
  return demand;
}

/** The attempt for one webhook, or null when its endpoint is not admitted now. */
function plannedAttempt(
  webhook: {
    id: string;
    eventId: string;
    organizationId: string;
    endpointId: string;
    payload: string;
    webhookType: string;
    resourceType: string;
    traceparent: string | null;
    sequence: number | null;
  },
  eventCreatedAt: string,
  target: DeliveryTarget | null,
  previous: PlannedAttempt['previous'],
  admit: Admit,
): PlannedAttempt | null {
  const permanent = permanentFailure(target);
  if (!permanent && admit(webhook) === 'none') return null;
  return {
    id: webhook.id,
    eventId: webhook.eventId,
    organizationId: webhook.organizationId,
    endpointId: webhook.endpointId,
    attempt: 0,
    cycleStartAttempt: 0,
    payload: webhook.payload,
    eventCreatedAt: new Date(eventCreatedAt),
    webhookType: webhook.webhookType,
    resourceType: webhook.resourceType,
    traceparent: webhook.traceparent,
    sequence: webhook.sequence,
    target,
    receiver: permanent ? null : webhook.endpointId,
    permanent,
    previous,
  };
}

/**
 * Whether judging an event needs its resource (`data`): when an endpoint of its organization that
 * may receive it filters on content or takes full bodies. Reading nothing otherwise keeps thin,
 * unfiltered fan-out as cheap as before.
 */
export function needsResource(
  event: Pick<PendingEvent, 'webhookType' | 'resourceType' | 'contractAddress'>,
  targets: readonly DeliveryTarget[],
): boolean {
  if (event.resourceType === 'WebhookTest') return false;
  return targets.some((target) => (target.filter !== null || target.payload === 'full') && decideEvent(event, target).kind === 'deliver');
}

/**
 * The events of a batch that must wait before being judged because webhooks numbered per resource
 * follow event order: each event an older unjudged event of its resource comes before
 * (`blockedByOlder`, events outside the batch), and every later event of the batch of the same
 * resource as one of those (it would otherwise be numbered ahead of it). Events of a resource in
 * the batch are ordered by time, then id.
 */
export function deferredForOrder(
  events: readonly Pick<PendingEvent, 'id' | 'organizationId' | 'resourceId' | 'createdAt'>[],
  blockedByOlder: ReadonlySet<string>,
): Set<string> {
  const byResource = new Map<string, Pick<PendingEvent, 'id' | 'createdAt'>[]>();
  for (const event of events) {
    const key = `${event.organizationId}:${event.resourceId}`;
    const list = byResource.get(key);
    if (list) list.push(event);
    else byResource.set(key, [event]);
  }
  const deferred = new Set<string>();
  for (const list of byResource.values()) {
    list.sort((a, b) => compareTimes(a.createdAt, b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const firstBlocked = list.findIndex((event) => blockedByOlder.has(event.id));
    if (firstBlocked >= 0) for (const event of list.slice(firstBlocked)) deferred.add(event.id);
  }
  return deferred;
}

function compareTimes(a: string, b: string): number {
  const diff = new Date(a).getTime() - new Date(b).getTime();
  // Same millisecond: PostgreSQL's text keeps the microseconds, and one format sorts as text.
  return diff !== 0 ? diff : a < b ? -1 : a > b ? 1 : 0;
}
