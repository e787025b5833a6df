import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { EventLoopLag } from '../../../common/async/event-loop-lag';
import { AppConfig } from '../../../config/app-config';
import type { JudgedAnswer } from './adaptive-limit.rules';
import { AdaptiveLimits, InFlightPlace } from './adaptive-limits';
import type { Admit, PlannedAttempt } from './delivery-plan';
import { EndpointRateLimiter, RatePlace, rateLimitedDelayMs } from './endpoint-rate-limiter';
import { AdmittedAttempts, admitAttempt, organizationShare } from './fair-share';
import { InFlightLimiter } from './in-flight-limiter';
import { RetryLaterError } from './webhook-jobs';
import { attemptLeaseMs } from './webhook.rules';

/** An endpoint whose sends typically finish within this is worth waiting a moment for when at its limit. */
const FAST_ENDPOINT_MS = 100;
/**
 * Long enough for every job of both lanes queued on one fast endpoint to get a slot at a few
 * hundred sends per second; a wait that times out gives its claim back, which costs a write.
 */
const MAX_SLOT_WAIT_MS = 1000;

/**
 * Room for attempts: a slot of the organization and one of the endpoint on this worker (attempts
 * in flight, each bounded), the endpoint's slots bounded, when it sets maxInFlight, by this
 * worker's grant of the endpoint's adaptive in-flight limit (shared by every worker through Redis,
 * taken per batch before planning), else by WEBHOOK_PER_RECEIVER_CONCURRENCY per worker, the
 * attempts batches admitted and have not started yet, and the endpoints'
 * `rateLimitPerSecond` (counted in Redis across every worker). The batch executor prepares the
 * grants and asks it what to admit; the attempt runner takes and frees the slots, without Redis.
 */
@Injectable()
export class AttemptSlots implements OnModuleDestroy {
  /** Keyed by endpoint id: two endpoints on one host have a budget each (this worker's grant of the endpoint's limit, or the fixed one). */
  private readonly endpoints: InFlightLimiter;
  /** The adaptive limit of each endpoint that sets maxInFlight, and this worker's grant of it, in Redis. */
  private readonly limits: AdaptiveLimits;
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
    // A grant outlives any attempt admitted under it (by its claim's lease): past it, a worker that stopped holds none.
    this.limits = new AdaptiveLimits(
      config,
      config.webhook.perReceiverConcurrency,
      attemptLeaseMs(config.webhook.timeoutMs),
      (endpointId) => this.endpoints.count(endpointId),
    );
  }

  /**
   * Before a batch is planned: a fresh grant, with room for the batch's attempts when there is
   * any, for each endpoint it may send to (`demand`: per endpoint, its maxInFlight and how many
   * attempts the batch may ask for). At most one Redis round trip, none while the grants suffice.
   */
  prepare(demand: ReadonlyMap<string, { maxInFlight: number | null; attempts: number }>): Promise<void> {
    let shared: Map<string, { maxInFlight: number | null; attempts: number }> | null = null;
    for (const [endpointId, wanted] of demand) {
      if (wanted.maxInFlight !== null) (shared ??= new Map()).set(endpointId, wanted);
      else if (this.limits.shares(endpointId)) this.limits.drop(endpointId);
    }
    return shared ? this.limits.prepare(shared, (endpointId) => this.admitted.endpoints.get(endpointId) ?? 0) : Promise.resolve();
  }

  /**
   * How many of this worker's attempts may be in flight to the endpoint now: within its grant of
   * the shared, adaptive limit when it sets maxInFlight; else the service's fixed
   * WEBHOOK_PER_RECEIVER_CONCURRENCY per worker, with no Redis call at all. Sharing and adapting
   * cost a worker a grant per batch: with every endpoint under it, one worker delivered a
   * 20,000-webhook burst at 1,754/s against 1,944/s, and a first fan-out burst to three new
   * endpoints at 794/s against 2,141/s, so an endpoint opts in by setting maxInFlight.
   */
  private endpointLimit(endpointId: string, forAdmission: boolean): number {
    if (!this.limits.shares(endpointId)) return this.config.webhook.perReceiverConcurrency;
    return forAdmission ? this.limits.admissionLimit(endpointId) : this.limits.slotLimit(endpointId);
  }

  /**
   * A batch's admission policy (see Admit; the rule is admitAttempt in fair-share.ts): an attempt
   * while its organization is below WEBHOOK_PER_ORGANIZATION_CONCURRENCY attempts in flight and its
   * endpoint below this worker's grant of its adaptive limit (adaptive-limit.rules.ts,
   * in-flight-grant.rules.ts), or at either limit when the endpoint answers fast (the attempt then
   * waits briefly for the next freed slot); otherwise none now, looked at again shortly, so neither
   * a slow endpoint nor an organization of slow endpoints can tie up the worker. Counts what every
   * batch of the worker admitted and has not started yet (batches run side by side), so together
   * they plan no more than there is room for. Without a fresh grant (other workers hold the
   * endpoint's places, or Redis cannot be asked) nothing is admitted, so nothing is claimed.
   */
  admission(): Admit {
    return ({ organizationId, endpointId }) => {
      if (this.rateLimitedFor(endpointId) > 0) return 'none';
      const endpointLimit = this.endpointLimit(endpointId, true);
      if (endpointLimit === 0) return 'none';
      const endpointAlready = this.admitted.endpoints.get(endpointId) ?? 0;
      const organizationAlready = this.admitted.organizations.get(organizationId) ?? 0;
      const organizationInFlight = this.organizations.count(organizationId);
      const others = this.organizations.activeCount() - (organizationInFlight > 0 ? 1 : 0);
      const admission = admitAttempt({
        endpointInFlight: this.endpoints.count(endpointId) + endpointAlready,
        endpointLimit,
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
   * One of the organization's slots, then one of the endpoint's within this worker's grant (each
   * now or, for a fast endpoint, the next one freed within the wait), with no Redis round trip:
   * the attempt's place, with the limit it starts under, or null, holding nothing, if either is
   * missing.
   */
  async acquire(organizationId: string, endpointId: string): Promise<InFlightPlace | null> {
    const fast = this.endpoints.isFast(endpointId);
    if (!this.organizations.tryAcquire(organizationId) && !(fast && (await this.organizations.waitForSlot(organizationId)))) return null;
    const limit = this.endpointLimit(endpointId, false);
    const slot =
      this.endpoints.tryAcquire(endpointId, limit) || (fast && limit > 0 && (await this.endpoints.waitForSlot(endpointId, limit)));
    const place = slot ? (this.limits.shares(endpointId) ? this.limits.started(endpointId) : this.fixedPlace(endpointId)) : null;
    if (place !== null) return place;
    if (slot) this.endpoints.release(endpointId);
    this.organizations.release(organizationId);
    return null;
  }

  /**
   * Frees the slots; `answer` (a request that reached the endpoint) feeds its typical duration
   * and moves its adaptive limit. A freed slot goes to a waiting attempt only within the grant.
   */
  release(organizationId: string, place: InFlightPlace, answer?: JudgedAnswer): void {
    if (place.shared) {
      // The adaptive limit judges the receiver's latency, not the time its answer waited on this worker.
      if (answer) this.limits.answered(place, { ...answer, latencyMs: Math.max(0, answer.latencyMs - this.lag.recentMs()) });
      this.endpoints.release(place.endpointId, answer?.latencyMs, this.limits.slotLimit(place.endpointId));
      this.limits.ended(place.endpointId);
    } else {
      this.endpoints.release(place.endpointId, answer?.latencyMs);
    }
    this.organizations.release(organizationId);
  }

  /** A place under the worker's fixed limit of an endpoint that sets no maxInFlight. */
  private fixedPlace(endpointId: string): InFlightPlace {
    const limit = this.config.webhook.perReceiverConcurrency;
    return {
      endpointId,
      shared: false,
      maxInFlight: limit,
      startedAt: Date.now(),
      atStart: { limit, threshold: limit, inFlight: this.endpoints.count(endpointId), floor: limit },
    };
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

  async onModuleDestroy(): Promise<void> {
    this.lag.stop();
    this.rates.close();
    await this.limits.close();
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
