import type { Admission } from './delivery-plan';

/** What a worker has in flight (plus what the batch already admitted) for one attempt's endpoint and organization. */
export interface AdmissionState {
  endpointInFlight: number;
  endpointLimit: number;
  /** The endpoint's recent sends were fast: waiting briefly for its next freed slot pays. */
  endpointIsFast: boolean;
  organizationInFlight: number;
  organizationLimit: number;
}

/**
 * The scheduling rule, asked once per attempt. An attempt is admitted while its organization is
 * below its cap of attempts in flight and its endpoint below its limit. At either limit, an
 * attempt to an endpoint known to answer fast is still admitted and waits briefly for the next
 * freed slot (its wait is bounded, and a fast receiver frees slots within milliseconds); one to a
 * slow or unknown endpoint gets none now. So an organization whose endpoints are slow holds at most
 * its cap of a worker's slots and never delays another organization's webhooks (docs/WEBHOOKS.md
 * "Isolation"). 'none' is looked at again shortly without spending an attempt: nothing is
 * dropped, only put back in line.
 */
export function admitAttempt(s: AdmissionState): Admission {
  const full = s.organizationInFlight >= s.organizationLimit || s.endpointInFlight >= s.endpointLimit;
  return full && !s.endpointIsFast ? 'none' : 'afterClaim';
}

/**
 * An organization's cap of attempts in flight on one worker, given how many other organizations
 * have attempts in flight there: the worker's slots split evenly between the active organizations
 * plus one share held back for an organization that has none yet, and never above the configured
 * cap (WEBHOOK_PER_ORGANIZATION_CONCURRENCY) nor below 1. So however many organizations have
 * slow endpoints, at least a share of the slots stays free for the next one, whose webhooks are
 * then sent at once: with 50 slots and a cap of 25, one busy organization may hold 25, two hold
 * 16 each, ten hold 4 each.
 */
export function organizationShare(cap: number, workerSlots: number, otherActiveOrganizations: number): number {
  return Math.max(1, Math.min(cap, Math.floor(workerSlots / (otherActiveOrganizations + 2))));
}

/**
 * Attempts a worker has admitted but not yet started, per endpoint and per organization: what
 * admission adds to the attempts in flight, so batches planned side by side share one count.
 */
export class AdmittedAttempts {
  readonly endpoints = new Map<string, number>();
  readonly organizations = new Map<string, number>();

  add(target: { organizationId: string; endpointId: string }): void {
    bump(this.endpoints, target.endpointId, 1);
    bump(this.organizations, target.organizationId, 1);
  }

  remove(target: { organizationId: string; endpointId: string }): void {
    bump(this.endpoints, target.endpointId, -1);
    bump(this.organizations, target.organizationId, -1);
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
