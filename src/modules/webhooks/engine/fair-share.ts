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
 * The scheduling rule, asked once per attempt: an organization at its cap of attempts in flight
 * gets none now, whatever its endpoints (so one organization's slow endpoints never delay
 * another's webhooks: README "Isolation"); below it, an endpoint with a free slot gets one, a
 * fast endpoint at its limit waits briefly for one, a slow one gets none now. 'none' is looked at
 * again shortly without spending an attempt, so nothing is dropped, only put back in line.
 */
export function admitAttempt(s: AdmissionState): Admission {
  if (s.organizationInFlight >= s.organizationLimit) return 'none';
  if (s.endpointInFlight >= s.endpointLimit && !s.endpointIsFast) return 'none';
  return 'afterClaim';
}
