import { Injectable, Logger } from '@nestjs/common';
import { inSpan, SpanHandle, tracingEnabled } from '../../../common/tracing/tracing';
import { AppConfig } from '../../../config/app-config';
import { DeliveryClaimRepository } from '../delivery-claim.repository';
import { AttemptRequests } from './attempt-request';
import type { InFlightPlace } from './adaptive-limits';
import { AttemptResults } from './attempt-results';
import { AttemptSlots } from './attempt-slots';
import type { PlannedAttempt } from './delivery-plan';
import { RetryLaterError } from './webhook-jobs';
import { countAttempt, webhookDeliveryLatency } from './webhook-metrics';
import type { SendResult } from './webhook-sender';
import { attemptMayStart, decideAfterAttempt, retryAfterMs, retryScheduleOf } from './webhook.rules';

/**
 * Makes one claimed attempt, top to bottom: a slot of its organization and of its endpoint, a
 * claim still young enough to send on, a place under the endpoint's rate limit, the request
 * (in its own span), the decision after it, and the result recorded. Whatever stops the attempt
 * before its request gives the claim back (no attempt is counted) and says when to look again.
 */
@Injectable()
export class AttemptRunner {
  private readonly logger = new Logger('WebhookDelivery');

  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryClaimRepository,
    private readonly slots: AttemptSlots,
    private readonly requests: AttemptRequests,
    private readonly results: AttemptResults,
  ) {}

  /** Resolves once the webhook needs nothing more now; throws a RetryLaterError to be looked at again later. */
  async run(claim: PlannedAttempt, claimedAt: Date, leaseUntil: Date): Promise<void> {
    const { signedAt, place } = await this.takeRoom(claim, leaseUntil);
    const result = await this.request(claim, leaseUntil, signedAt, place);
    countAttempt(result.outcome);

    const now = new Date();
    const schedule = retryScheduleOf(claim.target, this.config.webhook.retryScheduleMs);
    const after = decideAfterAttempt(
      {
        outcome: result.outcome,
        permanent: claim.permanent !== null,
        attempt: claim.attempt,
        cycleStartAttempt: claim.cycleStartAttempt,
        retryAfterMs: retryAfterMs(result.status, result.retryAfter, now.getTime()),
      },
      schedule.scheduleMs,
      Math.random,
      schedule.jitter,
    );
    const applied = await this.results.record({
      id: claim.id,
      organizationId: claim.organizationId,
      endpointId: claim.endpointId,
      attempt: claim.attempt,
      cycleStartAttempt: claim.cycleStartAttempt,
      startedAt: claimedAt,
      durationMs: result.durationMs,
      responseStatus: result.status,
      responseBody: result.responseBody,
      error: result.error,
      inFlightLimit: place?.atStart.limit ?? null,
      status: after.status,
      sequence: claim.sequence,
      nextAttemptAt: after.status === 'pending' ? new Date(now.getTime() + after.delayMs) : null,
      succeededAt: after.status === 'succeeded' ? now : null,
      // The organization hears of a webhook that ends failed, unless it is itself operational (no loops) or its endpoint is gone.
      exhausts: after.status === 'failed' && claim.webhookType !== 'operational' && claim.target !== null,
    });
    if (!applied) {
      // Redelivered (or re-claimed after our lease ran out) while the request was in flight: the
      // webhook's current state decides what happens next, so look at it again.
      throw new RetryLaterError(50, 'the webhook changed while its attempt was in flight');
    }
    if (after.status === 'succeeded') {
      webhookDeliveryLatency.observe((now.getTime() - claim.eventCreatedAt.getTime()) / 1000);
      return;
    }
    if (after.status === 'failed') {
      this.logger.warn({ webhookId: claim.id, attempts: claim.attempt, error: result.error }, 'webhook failed after its last attempt');
      return;
    }
    throw new RetryLaterError(after.delayMs, result.error ?? 'delivery failed');
  }

  /**
   * Room for the request: both slots (the endpoint's within this worker's grant of its in-flight
   * limit, no Redis round trip), a claim that still covers it, and the endpoint's rate limit
   * last, right before the request, so the attempt reaches the endpoint in the window it was
   * counted in. Returns the rate place's time to sign at (undefined: now) and the attempt's place
   * under the endpoint's in-flight limit. An attempt that makes no request (a permanent failure,
   * whose `receiver` is null) needs none. Throws, the claim given back, when there is none.
   */
  private async takeRoom(claim: PlannedAttempt, leaseUntil: Date): Promise<{ signedAt?: Date; place: InFlightPlace | null }> {
    const endpointId = claim.receiver;
    if (endpointId === null) return { place: null };
    const place = await this.slots.acquire(claim.organizationId, endpointId);
    if (place === null) {
      throw await this.giveBack(claim, this.slots.busy(claim.organizationId, claim.endpointId));
    }
    if (!attemptMayStart(leaseUntil.getTime(), Date.now(), this.config.webhook.timeoutMs)) {
      // Too late to send on this claim (see attemptMayStart): look again at once.
      this.slots.release(claim.organizationId, place);
      throw await this.giveBack(claim, new RetryLaterError(0, 'the claim ran out before the attempt could start'));
    }
    const rateLimit = claim.target?.rateLimitPerSecond ?? null;
    if (rateLimit === null) return { place };
    const rate = await this.slots.ratePlace(claim.endpointId, rateLimit);
    if (!rate.given) {
      // The endpoint had its attempts for this second: look again next second. Until then this
      // worker claims none of its webhooks, so the wait costs no write and no slot.
      this.slots.release(claim.organizationId, place);
      throw await this.giveBack(claim, this.slots.busy(claim.organizationId, claim.endpointId));
    }
    return { signedAt: new Date(rate.atMs), place };
  }

  /**
   * The one way an attempt that made no request ends: its claim is given back, as it was before
   * (no attempt counted, the webhook due as it was), and `retry` says when to look again.
   */
  private async giveBack(claim: PlannedAttempt, retry: RetryLaterError): Promise<RetryLaterError> {
    await this.deliveries.unclaim(claim.id, claim.attempt, claim.previous.lastAttemptAt, claim.previous.nextAttemptAt);
    return retry;
  }

  /**
   * The attempt's request (none for a permanent failure), in a span of its own when tracing is on;
   * frees the slots after it, telling the endpoint's adaptive limit what the answer was.
   */
  private async request(
    claim: PlannedAttempt,
    leaseUntil: Date,
    signedAt: Date | undefined,
    place: InFlightPlace | null,
  ): Promise<SendResult> {
    const attempt = async (span: SpanHandle | null): Promise<SendResult> => {
      let sent: SendResult;
      if (claim.permanent) {
        sent = { outcome: 'blocked', status: null, error: claim.permanent, durationMs: 0, responseBody: null };
      } else {
        try {
          sent = await this.requests.send(claim, span, leaseUntil, signedAt);
        } finally {
          if (place) {
            const answer = sent! as SendResult | undefined;
            this.slots.release(
              claim.organizationId,
              place,
              answer && answer.outcome !== 'blocked'
                ? { outcome: answer.outcome, status: answer.status, latencyMs: answer.durationMs }
                : undefined,
            );
          }
        }
      }
      if (span) {
        span.setAttributes({
          'webhook.outcome': sent.outcome,
          ...(sent.status !== null ? { 'http.response.status_code': sent.status } : {}),
        });
        if (sent.outcome !== 'success') span.fail(sent.error ?? sent.outcome);
      }
      return sent;
    };
    // With tracing off, not even the span's attributes are computed.
    return tracingEnabled()
      ? inSpan('webhook.attempt', { kind: 'client', links: [claim.traceparent], attributes: attemptAttributes(claim) }, attempt)
      : attempt(null);
  }
}

/** What an attempt's span says of it before it is made (webhook.outcome and the status are added after). */
function attemptAttributes(claim: PlannedAttempt): Record<string, string | number> {
  return {
    'webhook.id': claim.id,
    'webhook.event_id': claim.eventId,
    'webhook.endpoint_id': claim.endpointId,
    'webhook.attempt': claim.attempt,
    'webhook.resource_type': claim.resourceType,
  };
}
