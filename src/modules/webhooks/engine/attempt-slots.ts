import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { EventLoopLag } from '../../../common/async/event-loop-lag';
import { AppConfig } from '../../../config/app-config';
import type { Admit, PlannedAttempt } from './delivery-plan';
import { EndpointRateLimiter, RatePlace, rateLimitedDelayMs } from './endpoint-rate-limiter';
import { AdmittedAttempts, admitAttempt, organizationShare } from './fair-share';
import { InFlightLimiter } from './in-flight-limiter';
import { RetryLaterError } from './webhook-jobs';

/** An endpoint whose sends typically finish within this is worth waiting a moment for when at its limit. */
const FAST_ENDPOINT_MS = 100;
/**
 * Long enough for every job of both lanes queued on one fast endpoint to get a slot at a few
 * hundred sends per second; a wait that times out gives its claim back, which costs a write.
 */
const MAX_SLOT_WAIT_MS = 1000;

/**
 * Room for attempts on this worker: a slot of the organization and one of the endpoint (attempts
 * in flight, each bounded), the attempts batches admitted and have not started yet, and the
 * endpoints' `rateLimitPerSecond` (counted in Redis across every worker). The batch executor asks
 * it what to admit; the attempt runner takes and frees the slots.
 */
@Injectable()
export class AttemptSlots implements OnModuleDestroy {
  /** Keyed by endpoint id: two endpoints on one host have a budget each. */
  private readonly endpoints: InFlightLimiter;
  private readonly organizations: InFlightLimiter;
  /** Endpoints' `rateLimitPerSecond`, counted in Redis across every worker. */
  private readonly rates: EndpointRateLimiter;
  /**
   * Endpoints whose rate limit this worker found used up, until when (its clock): their webhooks
   * are not claimed again before then, so waiting costs no write. Redis stays the authority.
   */
  private readonly rateFullUntil = new Map<string, number>();
  /**
   * Attempts admitted by any batch of this worker that have not yet reached their slots. Batches
   * run side by side, so admission counts these too; counting only its own batch, each batch saw
   * the same free slots, together they claimed more than there was room for, and the surplus was
   * claimed and given back (two writes each, and under load a storm of them).
   */
  private readonly admitted = new AdmittedAttempts();

  /**
   * This worker's own event-loop delay. Whether an endpoint is fast is learned from how long its
   * sends took as this worker timed them; under a burst the worker reads answers late, and
   * counting that against the endpoint made every endpoint look slow, so webhooks bounced through
   * the queue instead of waiting for a slot, which loaded the worker further (a 60,000-webhook
   * fan-out fell from about 3,000 to 700 webhooks/s for a whole burst).
   */
  private readonly lag = new EventLoopLag();

  constructor(private readonly config: AppConfig) {
    const slotWait = { fastMs: FAST_ENDPOINT_MS, maxWaitMs: MAX_SLOT_WAIT_MS };
    this.endpoints = new InFlightLimiter(config.webhook.perReceiverConcurrency, { ...slotWait, ownDelayMs: () => this.lag.recentMs() });
    this.organizations = new InFlightLimiter(config.webhook.perOrganizationConcurrency, slotWait);
    this.rates = new EndpointRateLimiter(config);
  }

  /**
   * A batch's admission policy (see Admit; the rule is admitAttempt in fair-share.ts): an attempt
   * while its organization is below WEBHOOK_PER_ORGANIZATION_CONCURRENCY attempts in flight and its
   * endpoint below WEBHOOK_PER_RECEIVER_CONCURRENCY, or at either limit when the endpoint answers
   * fast (the attempt then waits briefly for the next freed slot); otherwise none now, looked at
   * again shortly, so neither a slow endpoint nor an organization of slow endpoints can tie up the
   * worker. Counts what every batch of the worker admitted and has not started yet (batches run
   * side by side), so together they plan no more than there is room for.
   */
  admission(): Admit {
    return ({ organizationId, endpointId }) => {
      if (this.rateLimitedFor(endpointId) > 0) return 'none';
      const endpointAlready = this.admitted.endpoints.get(endpointId) ?? 0;
      const organizationAlready = this.admitted.organizations.get(organizationId) ?? 0;
      const organizationInFlight = this.organizations.count(organizationId);
      const others = this.organizations.activeCount() - (organizationInFlight > 0 ? 1 : 0);
      const admission = admitAttempt({
        endpointInFlight: this.endpoints.count(endpointId) + endpointAlready,
        endpointLimit: this.config.webhook.perReceiverConcurrency,
        endpointIsFast: this.endpoints.isFast(endpointId),
        organizationInFlight: organizationInFlight + organizationAlready,
        organizationLimit: organizationShare(this.config.webhook.perOrganizationConcurrency, this.config.webhook.concurrency, others),
      });
      if (admission === 'afterClaim') this.admitted.add({ organizationId, endpointId });
      return admission;
    };
  }

  /** An admitted attempt started, or will not: it no longer counts as admitted. */
  unadmit(attempt: PlannedAttempt): void {
    if (!attempt.permanent) this.admitted.remove(attempt);
  }

  /**
   * One of the organization's slots, then one of the endpoint's: each now or, for a fast endpoint,
   * the next one freed within the wait; false, holding neither, if either is missing.
   */
  async acquire(organizationId: string, endpointId: string): Promise<boolean> {
    const fast = this.endpoints.isFast(endpointId);
    if (!this.organizations.tryAcquire(organizationId) && !(fast && (await this.organizations.waitForSlot(organizationId)))) return false;
    if (this.endpoints.tryAcquire(endpointId) || (fast && (await this.endpoints.waitForSlot(endpointId)))) return true;
    this.organizations.release(organizationId);
    return false;
  }

  /** Frees both slots; `tookMs` (a request that reached the endpoint) feeds its typical duration. */
  release(organizationId: string, endpointId: string, tookMs?: number): void {
    this.endpoints.release(endpointId, tookMs);
    this.organizations.release(organizationId);
  }

  /**
   * A place under the endpoint's rate limit (Redis's clock, the window's). When the limit is used
   * up for this second, this worker claims none of the endpoint's webhooks until the next window.
   */
  async ratePlace(endpointId: string, limit: number): Promise<RatePlace> {
    const place = await this.rates.take(endpointId, limit);
    if (!place.given) this.rateFullUntil.set(endpointId, Date.now() + place.waitMs);
    return place;
  }

  /**
   * "Look again later" for a webhook of this endpoint that got no attempt now: after the rate
   * limit's window when that is what stopped it, else spread over the time the endpoint or its
   * organization is expected to take to free a slot (at most the timeout).
   */
  busy(organizationId: string, endpointId: string): RetryLaterError {
    const rateLimitedMs = this.rateLimitedFor(endpointId);
    if (rateLimitedMs > 0)
      return new RetryLaterError(rateLimitedDelayMs(rateLimitedMs), 'the endpoint’s rate limit is used up for this second');
    const expectedMs = Math.max(this.endpoints.expectedMs(endpointId), this.organizations.expectedMs(organizationId));
    return busy(Math.min(expectedMs, this.config.webhook.timeoutMs));
  }

  /** How long until the endpoint's rate limit lets attempts through again, as this worker last learned; 0 when it may. */
  private rateLimitedFor(endpointId: string): number {
    const until = this.rateFullUntil.get(endpointId);
    if (until === undefined) return 0;
    const leftMs = until - Date.now();
    if (leftMs <= 0) this.rateFullUntil.delete(endpointId);
    return Math.max(0, leftMs);
  }

  onModuleDestroy(): void {
    this.lag.stop();
    this.rates.close();
  }
}

/**
 * No attempt was made (the endpoint or its organization had no free slot): come back without
 * spending one of the schedule's attempts, spread over about as long as the endpoint takes to
 * answer (within half a second for a fast one). A slot of a slow endpoint frees only when one of its
 * answers comes, so looking sooner would only churn the queue ahead of other organizations' jobs.
 */
function busy(typicalMs = 0): RetryLaterError {
  return new RetryLaterError(
    100 + Math.round(Math.random() * Math.max(400, typicalMs)),
    'no free slot for the endpoint or its organization',
  );
}
