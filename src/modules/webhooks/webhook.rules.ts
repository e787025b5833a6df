import { createHmac } from 'node:crypto';

/** What the body of a webhook is built from (seed 2.5). */
export interface WebhookSource {
  organizationId: string;
  action: string;
  id: string;
  resourceId: string;
  resourceType: string;
  /** The event's commit-side timestamp, already in the contract's format. */
  createdAtUtc: string;
  changes: Record<string, unknown> | null;
}

/**
 * The exact body bytes of a webhook: the seed's keys in the contract's order. Built once when the
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
  });
}

/** Base64(HMAC-SHA256(sharedSecret, body)), the value of x-service-webhook-hmac (seed 5). */
export function signWebhookBody(sharedSecret: string, body: string | Buffer): string {
  return createHmac('sha256', sharedSecret).update(body).digest('base64');
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
): number | null {
  if (failedAttemptsInCycle < 1 || failedAttemptsInCycle > schedule.length) return null;
  const base = schedule[failedAttemptsInCycle - 1];
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** How long a claimed attempt keeps other workers away; past it, a crashed attempt is retried. */
export function attemptLeaseMs(timeoutMs: number): number {
  return timeoutMs * 2 + 5000;
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
  return Math.max(leaseMs, Math.ceil(Math.max(0, ...schedule) * 1.2)) + CLOCK_SKEW_TOLERANCE_MS;
}

/** Success is any 2xx received in time; everything else is a failed attempt (no redirects). */
export function isSuccessStatus(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}
