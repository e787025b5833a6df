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

/** Success is any 2xx received in time; everything else is a failed attempt (no redirects). */
export function isSuccessStatus(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}
