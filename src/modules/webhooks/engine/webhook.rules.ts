import { parse as parseUuid, v7 as uuidv7 } from 'uuid';
import { createHash } from 'node:crypto';
import { operationalSubject } from '../../domain-events/domain-event.catalogue';
import { ContentFilter, filterMatches } from '../../webhook-endpoints/content-filter.rules';

/** What the body of a webhook is built from (README.md, "Webhooks", item 3). */
export interface WebhookSource {
  organizationId: string;
  action: string;
  id: string;
  resourceId: string;
  resourceType: string;
  /** The event's commit-side timestamp, already in the API's UTC format. */
  createdAtUtc: string;
  changes: Record<string, unknown> | null;
  /** For an endpoint that takes full bodies: the resource as its GET answers (null for a test); left out for thin bodies. */
  data?: unknown;
}

/**
 * The exact body bytes of a webhook: the documented keys in the documented order (README.md, "Webhooks"). Built once when the
 * delivery is created and stored, so every attempt and redelivery sends the same bytes.
 */
export function buildWebhookBody(source: WebhookSource): string {
  return JSON.stringify({
    organizationId: source.organizationId,
    action: source.action,
    id: source.id,
    resourceId: source.resourceId,
    resourceType: source.resourceType,
    createdAtUtc: source.createdAtUtc,
    changes: source.changes ?? null,
    // Last, and only for full bodies: a thin body stays byte for byte the envelope above.
    ...(source.data === undefined ? {} : { data: source.data }),
  });
}

/**
 * Delay before the next attempt after `failedAttemptsInCycle` failures, with ±20% jitter so
 * receivers recovering from an outage are not hit by every retry at the same instant. Null when
 * the schedule is exhausted and the delivery is failed.
 */
export function retryDelayMs(
  schedule: readonly number[],
  failedAttemptsInCycle: number,
  random: () => number = Math.random,
  jitter = SERVICE_SCHEDULE_JITTER,
): number | null {
  if (failedAttemptsInCycle < 1 || failedAttemptsInCycle > schedule.length) return null;
  const base = schedule[failedAttemptsInCycle - 1];
  return Math.round(base * (1 - jitter + 2 * jitter * random()));
}

/** The service's schedule spreads retries by ±20 %; an endpoint's own schedule by at most ±10 %, closer to what its owner set. */
export const SERVICE_SCHEDULE_JITTER = 0.2;
export const ENDPOINT_SCHEDULE_JITTER = 0.1;

/** The schedule an endpoint's webhooks retry on: its own when it has one, otherwise the service's. */
export function retryScheduleOf(
  target: { retryScheduleMs?: readonly number[] | null } | null,
  serviceScheduleMs: readonly number[],
): { scheduleMs: readonly number[]; jitter: number } {
  const own = target?.retryScheduleMs ?? null;
  return own === null
    ? { scheduleMs: serviceScheduleMs, jitter: SERVICE_SCHEDULE_JITTER }
    : { scheduleMs: own, jitter: ENDPOINT_SCHEDULE_JITTER };
}

/** Time allowed after a request's timeout for its result to be written, within the lease. */
export const RESULT_ALLOWANCE_MS = 5000;

/**
 * How long a claimed attempt keeps other workers away; past it, a crashed attempt is retried. It
 * covers waiting up to one timeout to start (attemptMayStart), the request's own timeout and the
 * writing of its result.
 */
export function attemptLeaseMs(timeoutMs: number): number {
  return timeoutMs * 2 + RESULT_ALLOWANCE_MS;
}

/**
 * Whether a claimed attempt may still be sent: only while its lease covers the whole request and
 * the writing of its result. Past that point another worker may take the webhook over when the
 * lease runs out while this request is still in flight, and the receiver would get it twice; an
 * attempt delayed that long (waiting for a slot, a stalled process) is given back instead.
 */
export function attemptMayStart(leaseUntilMs: number, nowMs: number, timeoutMs: number): boolean {
  return nowMs + timeoutMs + RESULT_ALLOWANCE_MS <= leaseUntilMs;
}

/** Clock difference between hosts that is still taken at face value. */
export const CLOCK_SKEW_TOLERANCE_MS = 60_000;

/**
 * The furthest ahead this service ever schedules an attempt (the longest retry delay with its
 * jitter, or an attempt's lease), plus the skew tolerance. A next attempt later than this was
 * written by a host whose clock ran ahead; honouring it would hold the webhook for as long as
 * that clock was wrong, so it counts as due now.
 */
export function furthestLegitimateAttemptMs(schedule: readonly number[], leaseMs: number): number {
  // An endpoint's own delays are at most a day (RETRY_AFTER_MAX_MS) with ±10 %.
  const longest = Math.max(Math.ceil(Math.max(0, ...schedule) * (1 + SERVICE_SCHEDULE_JITTER)), Math.ceil(RETRY_AFTER_MAX_MS * 1.1));
  return Math.max(leaseMs, longest) + CLOCK_SKEW_TOLERANCE_MS;
}

/** The longest wait a receiver's Retry-After can ask for; a longer one counts as this. */
export const RETRY_AFTER_MAX_MS = 24 * 60 * 60 * 1000;

/** The answers whose Retry-After is honoured: the receiver is overloaded or unavailable for a while. */
const RETRY_AFTER_STATUSES: readonly number[] = [429, 503];

/**
 * How long a receiver asked to be left alone, from its answer's status and `Retry-After` header
 * (delta-seconds, or an HTTP date taken against `nowMs`), at most RETRY_AFTER_MAX_MS. Null when
 * the answer is not 429 or 503 or carries no usable Retry-After; a date already past asks for no wait (0).
 */
export function retryAfterMs(status: number | null, header: string | null | undefined, nowMs: number): number | null {
  if (status === null || !RETRY_AFTER_STATUSES.includes(status) || header === null || header === undefined) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, RETRY_AFTER_MAX_MS);
  // An HTTP date (IMF-fixdate, or the obsolete RFC 850 and asctime forms Date.parse also reads);
  // a bare number with a sign or a fraction is not one of them.
  if (!/[a-z]/i.test(value)) return null;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), RETRY_AFTER_MAX_MS);
}

/** Success is any 2xx received in time; everything else is a failed attempt (no redirects). */
export function isSuccessStatus(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/** What the worker knows of an endpoint when it judges or attempts a webhook. */
export interface TargetFacts {
  url: string | null;
  /** A message broker the endpoint publishes to instead of a url; absent or null for HTTP. */
  destination?: object | null;
  enabled: boolean;
  webhookTypes: readonly string[];
  /** Lowercase contracts an `nft` or `transaction` webhook must be about; null for no filter. */
  contractAddresses?: readonly string[] | null;
  secret: string | null;
  /** Why the stored secret could not be opened, if it could not. */
  secretError: string | null;
}

export type EventDecision = { kind: 'skip' } | { kind: 'deliver' };

/** What an endpoint chose to receive beyond its types and contracts (receiver-choices.rules.ts). */
export interface TargetChoices {
  endpointId: string;
  filter: ContentFilter | null;
}

/** An event as content filters see it: its envelope's facts and its resource (`data`). */
export interface FilteredEvent {
  webhookType: string;
  resourceType: string;
  action: string;
  organizationId: string;
  resourceId: string;
  changes: Record<string, unknown> | null;
}

/**
 * Whether an event that passed decideEvent also passes what the endpoint chose: an `operational`
 * event never goes to the endpoint it is about, and a content filter must match the event with its
 * resource (`data`, read only when some filter or full body needs it). Test webhooks ignore filters.
 */
export function passesChoices(event: FilteredEvent, target: TargetChoices, data: unknown): boolean {
  if (event.resourceType === 'WebhookTest') return true;
  if (operationalSubject(event) === target.endpointId) return false;
  if (target.filter === null) return true;
  return filterMatches(target.filter, {
    webhookType: event.webhookType,
    resourceType: event.resourceType,
    action: event.action,
    organizationId: event.organizationId,
    resourceId: event.resourceId,
    changes: event.changes,
    data: data ?? null,
  });
}

/** The webhook types a contract filter applies to: the ones about a token. */
const CONTRACT_FILTERED_TYPES: readonly string[] = ['nft', 'transaction'];

/**
 * Whether an event becomes a webhook for one endpoint, judged with the endpoint as it is now
 * (docs/WEBHOOKS.md "Several endpoints: fan-out, filters, replay, auto-disable"; per endpoint): only with a url, only while enabled and subscribed to the event's
 * type, and, when the endpoint filters by contract, only for `nft` and `transaction` events
 * about a token of one of those contracts (a test webhook goes out whatever the switch and the
 * filters say).
 */
export function decideEvent(
  event: { webhookType: string; resourceType: string; contractAddress?: string | null },
  target: TargetFacts,
): EventDecision {
  if (!hasReceiver(target)) return { kind: 'skip' };
  if (event.resourceType === 'WebhookTest') return { kind: 'deliver' };
  if (!target.enabled || !target.webhookTypes.includes(event.webhookType)) return { kind: 'skip' };
  const contracts = target.contractAddresses ?? null;
  if (contracts !== null && CONTRACT_FILTERED_TYPES.includes(event.webhookType)) {
    const contract = event.contractAddress?.toLowerCase() ?? null;
    if (contract === null || !contracts.includes(contract)) return { kind: 'skip' };
  }
  return { kind: 'deliver' };
}

/**
 * The id of an event's webhook to one endpoint: the event's own id for the default endpoint (so
 * a single-endpoint organization's webhook ids are its event ids), otherwise a UUIDv7 with the event's
 * timestamp and bits derived from the event and endpoint ids. It is stable (judging an event twice
 * gives the same ids) and sorts with the event, so the delivery log stays in time order.
 */
export function webhookIdFor(eventId: string, endpointId: string, isDefault: boolean): string {
  if (isDefault) return eventId;
  // The event's 48-bit millisecond timestamp, and "random" bits that are a hash of the pair.
  const msecs = Buffer.from(parseUuid(eventId)).readUIntBE(0, 6);
  const random = createHash('sha256').update(`${eventId}/${endpointId}`).digest().subarray(0, 16);
  return uuidv7({ msecs, random });
}

export type AttemptDecision = { kind: 'none' } | { kind: 'wait'; dueInMs: number } | { kind: 'attempt' };

/**
 * Whether an existing webhook's next attempt is due: only a pending one, once its next attempt
 * time has come. A time further ahead than this service ever schedules (`furthestMs`) was written
 * by a host whose clock ran ahead, so it counts as due now.
 */
export function decideAttempt(
  delivery: { status: string; nextAttemptAt: Date | null },
  nowMs: number,
  furthestMs: number,
): AttemptDecision {
  if (delivery.status !== 'pending') return { kind: 'none' };
  const dueInMs = delivery.nextAttemptAt ? delivery.nextAttemptAt.getTime() - nowMs : 0;
  if (dueInMs > 50 && dueInMs <= furthestMs) return { kind: 'wait', dueInMs };
  return { kind: 'attempt' };
}

/**
 * A reason no attempt can ever succeed as things stand (the configuration is gone, has no url or
 * secret, or its secret cannot be opened): the webhook ends failed at once with this reason in
 * its log instead of retrying. A redelivery after the configuration is fixed starts it again.
 */
export function permanentFailure(target: TargetFacts | null): string | null {
  if (target === null) return 'the webhook endpoint was deleted';
  if (target.secretError !== null) return target.secretError;
  if (!hasReceiver(target)) return 'the webhook configuration has no url';
  if (target.secret === null) return 'the webhook configuration has no shared secret';
  return null;
}

/** Whether an endpoint has somewhere to send to: a url, or a broker destination. */
export function hasReceiver(target: Pick<TargetFacts, 'url' | 'destination'>): boolean {
  return target.url !== null || (target.destination ?? null) !== null;
}

/** A reason to skip this attempt for now (it counts as failed and is retried on the schedule). */
export function temporaryBlock(target: TargetFacts, resourceType: string): string | null {
  if (!target.enabled && resourceType !== 'WebhookTest') return 'the webhook configuration is disabled';
  return null;
}

export type AfterAttempt = { status: 'succeeded' } | { status: 'pending'; delayMs: number } | { status: 'failed' };

/**
 * Where a webhook stands after an attempt: succeeded on a 2xx; failed after a permanent error or
 * once the retry cycle's schedule is used up; otherwise pending, with the next delay (at least
 * what the receiver asked for with Retry-After, see retryAfterMs).
 */
export function decideAfterAttempt(
  attempt: { outcome: string; permanent: boolean; attempt: number; cycleStartAttempt: number; retryAfterMs?: number | null },
  schedule: readonly number[],
  random: () => number = Math.random,
  jitter = SERVICE_SCHEDULE_JITTER,
): AfterAttempt {
  if (attempt.outcome === 'success') return { status: 'succeeded' };
  if (attempt.permanent) return { status: 'failed' };
  const delayMs = retryDelayMs(schedule, attempt.attempt - attempt.cycleStartAttempt, random, jitter);
  if (delayMs === null) return { status: 'failed' };
  // The receiver said when it can take more: not before then (its time exactly, no jitter on it),
  // and never sooner than the schedule would have come back anyway.
  return { status: 'pending', delayMs: Math.max(delayMs, attempt.retryAfterMs ?? 0) };
}
