// engine/: from a committed event to attempts and their retries (relay, jobs, plan, executor, signing, sending).
import { EntityManager } from '@mikro-orm/postgresql';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config';
import { urlPolicyOf } from '../../../common/net/url-policy';
import { DeliveryTarget, DeliveryTargetReader } from '../../webhook-config/delivery-target.reader';
import { OutboxEvents, PendingEvent } from './outbox/outbox-events';
import { Admit, DeliveryPlan, PlannedAttempt, planDeliveries } from './delivery-plan';
import { EndpointHealthTally } from './endpoint-health';
import { EndpointRateLimiter, rateLimitedDelayMs } from './endpoint-rate-limiter';
import { AdmittedAttempts, admitAttempt, organizationShare } from './fair-share';
import { MicroBatch } from './micro-batch';
import { ReceiverLimiter } from './receiver-limiter';
import { AttemptResult, DeliveryState, WebhookDeliveryRepository } from '../webhook-delivery.repository';
import { DeliverJobData, delayOf, RetryLaterError, WebhookJobs } from './webhook-jobs';
import { countAttempt, webhookDeliveryLatency } from './webhook-metrics';
import { OAuth2Client, OAuth2TokenCache, TokenRequestError } from './oauth2-tokens';
import { ClientTls, SendResult, WebhookSender } from './webhook-sender';
import { webhookSignatureHeaders } from './webhook-signature';
import {
  attemptLeaseMs,
  attemptMayStart,
  decideAfterAttempt,
  furthestLegitimateAttemptMs,
  retryAfterMs,
  temporaryBlock,
} from './webhook.rules';
import { knexTransaction } from '../../../database/raw-sql';
import { inSpan, SpanHandle, tracingEnabled } from '../../../common/tracing/tracing';

const USER_AGENT = 'nft-wallet-webhooks/1.0';
/** A receiver whose sends typically finish within this is worth waiting a moment for when at its limit. */
const FAST_RECEIVER_MS = 100;
/**
 * Long enough for every job of both lanes queued on one fast receiver to get a slot at a few
 * hundred sends per second; a wait that times out gives its claim back, which costs a write.
 */
const MAX_SLOT_WAIT_MS = 1000;
/**
 * Jobs arriving within a few milliseconds are judged and claimed together, and results are
 * recorded together: a handful of statements per batch instead of three per webhook. The job
 * wait is short enough not to show in commit-to-receipt latency at a steady rate, and judging
 * batches run side by side, so one held up (a row lock, a slow statement) delays no other
 * organization's webhooks. Results wait longer, and at most two of their batches write at a time
 * (the next gathers meanwhile, as a group commit does): the receiver already has the webhook and
 * the slot is already free, so the wait delays nothing anyone sees, while batches stay full when
 * several workers split the stream or the database is slow. Each statement has a fixed cost
 * (planning over the day partitions, a round trip); with a 15 ms wait, a second worker's
 * half-full result batches made it pay that cost twice as often.
 */
const JOB_BATCH = { maxItems: 100, maxWaitMs: 2 };
const RESULT_BATCH = { maxItems: 500, maxWaitMs: 30, maxInFlight: 2 };
/** How often a worker writes down what it learned of endpoints' runs of failures (auto-disable). */
const HEALTH_FLUSH_MS = 1000;
/** Webhooks to look at again later, queued together as their own jobs. */
const REQUEUE_BATCH = { maxItems: 200, maxWaitMs: 5 };
/**
 * How long a webhook ordered per resource waits behind a pending predecessor before it looks
 * again. Only a fallback: the end of the predecessor wakes it at once (see releaseSuccessors).
 */
const ORDER_WAIT_MS = { min: 2000, jitter: 2000 };
/** How long an event waits before it is judged again when an older event of its resource is still unjudged. */
const OLDER_EVENT_WAIT_MS = 50;

/** One unit of a job: an event to judge or a webhook to attempt (a job carries one kind). */
interface Work {
  kind: 'event' | 'webhook';
  id: string;
}

/**
 * The delivery engine's executor. Jobs arriving together are handled as one batch: one read of
 * their events, webhooks and endpoints; then planDeliveries (delivery-plan.ts, pure) says what to
 * write and which attempts to make; this class writes it (one statement judging the events into
 * webhooks and claiming their first attempts, one claiming due attempts), makes every attempt as
 * its own POST, and records the results in batches, each only if its attempt is still the
 * current one. Every webhook is treated the same: an event's job waits for all of its webhooks'
 * first attempts, and each one that must be looked at again later gets a job under its own id
 * as soon as that is known. PostgreSQL is the source of truth, so duplicate or lost jobs can
 * neither double-send an attempt nor drop a webhook.
 */
@Injectable()
export class WebhookDeliveryService implements OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly limiter: ReceiverLimiter;
  /** Attempts in flight per organization (the same counting, keyed by organization id). */
  private readonly organizations: ReceiverLimiter;
  private readonly sender: WebhookSender;
  /** OAuth2 tokens of the endpoints that want one, in memory only. */
  private readonly tokens: OAuth2TokenCache;
  /** Endpoints' `rateLimitPerSecond`, counted in Redis across every worker. */
  private readonly rates: EndpointRateLimiter;
  /**
   * Endpoints whose rate limit this worker found used up, until when (its clock): their webhooks
   * are not claimed again before then, so waiting costs no write. Redis stays the authority.
   */
  private readonly rateFullUntil = new Map<string, number>();
  /** How long a claimed attempt keeps others away; past it, a crashed attempt is retried. */
  private readonly leaseMs: number;
  private readonly furthestAttemptMs: number;
  private readonly work: MicroBatch<Work, void>;
  private readonly results: MicroBatch<AttemptResult, boolean>;
  private readonly requeues: MicroBatch<{ id: string; delayMs: number }, undefined>;
  private readonly health = new EndpointHealthTally();
  /**
   * Attempts admitted by any batch of this worker that have not yet reached their slots. Batches
   * run side by side, so admission counts these too; counting only its own batch, each batch saw
   * the same free slots, together they claimed more than there was room for, and the surplus was
   * claimed and given back (two writes each, and under load a storm of them).
   */
  private readonly admitted = new AdmittedAttempts();
  private readonly healthTimer: NodeJS.Timeout;

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly outbox: OutboxEvents,
    private readonly targets: DeliveryTargetReader,
    private readonly jobs: WebhookJobs,
  ) {
    const slotWait = { fastReceiverMs: FAST_RECEIVER_MS, maxWaitMs: MAX_SLOT_WAIT_MS };
    // Keyed by endpoint id: two endpoints on one host have a budget each.
    this.limiter = new ReceiverLimiter(config.webhook.perReceiverConcurrency, slotWait);
    this.organizations = new ReceiverLimiter(config.webhook.perOrganizationConcurrency, slotWait);
    this.sender = new WebhookSender({
      timeoutMs: config.webhook.timeoutMs,
      ...urlPolicyOf(config),
    });
    this.tokens = new OAuth2TokenCache((client) => this.sender.requestToken(client));
    this.rates = new EndpointRateLimiter(config);
    this.leaseMs = attemptLeaseMs(config.webhook.timeoutMs);
    this.furthestAttemptMs = furthestLegitimateAttemptMs(config.webhook.retryScheduleMs, this.leaseMs);
    this.work = new MicroBatch((items) => this.handleBatch(items), JOB_BATCH);
    this.results = new MicroBatch(async (rows) => {
      const applied = await this.deliveries.recordResults(rows);
      const ended = rows.filter((row) => row.sequence !== null && row.status !== 'pending' && applied.has(row.id)).map((row) => row.id);
      if (ended.length > 0) void this.releaseSuccessors(ended);
      const at = new Date();
      for (const row of rows) {
        const firstOfCycle = row.attempt === row.cycleStartAttempt + 1;
        this.health.add(
          { endpointId: row.endpointId, organizationId: row.organizationId, succeeded: row.status === 'succeeded', firstOfCycle },
          at,
        );
      }
      return rows.map((row) => applied.has(row.id));
    }, RESULT_BATCH);
    this.healthTimer = setInterval(() => void this.flushHealth(), HEALTH_FLUSH_MS);
    this.healthTimer.unref();
    this.requeues = new MicroBatch(async (later) => {
      await this.jobs.addWebhooks(later);
      return later.map(() => undefined);
    }, REQUEUE_BATCH);
  }

  /** Job entry point: resolves when the job's work needs nothing more now; throws to be run again later. */
  async handleJob(data: DeliverJobData): Promise<void> {
    if (data.webhookId !== undefined) return this.work.add({ kind: 'webhook', id: data.webhookId });
    await Promise.all((data.eventIds ?? []).map((id) => this.work.add({ kind: 'event', id })));
  }

  private async handleBatch(items: Work[]): Promise<Promise<void>[]> {
    const eventIds = [...new Set(items.filter((w) => w.kind === 'event').map((w) => w.id))];
    const webhookIds = [...new Set(items.filter((w) => w.kind === 'webhook').map((w) => w.id))];
    const [states, events] = await Promise.all([this.deliveries.states(webhookIds), this.outbox.pending(eventIds)]);
    const organizations = [...[...states.values()].map((s) => s.organizationId), ...[...events.values()].map((e) => e.organizationId)];
    const endpoints = await this.targets.endpoints(organizations);
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + this.leaseMs);
    const plan = planDeliveries({
      eventIds,
      webhookIds,
      states,
      events,
      endpoints,
      now,
      furthestAttemptMs: this.furthestAttemptMs,
      admit: this.admission(),
    });
    // Admitted attempts that this batch does not start (their event or webhook was taken by
    // another worker, or a write failed) give their admission back at its end.
    const unstarted = new Map<string, PlannedAttempt>();
    for (const j of plan.judge) for (const w of j.webhooks) if (w.first && !w.first.permanent) unstarted.set(w.first.id, w.first);
    for (const c of plan.claim) if (!c.attempt.permanent) unstarted.set(c.attempt.id, c.attempt);
    try {
      return await this.carryOut(items, plan, states, events, now, leaseUntil, unstarted);
    } finally {
      for (const attempt of unstarted.values()) this.admitted.remove(attempt);
    }
  }

  /** handleBatch's writes and attempts for its plan; `unstarted` loses each attempt as it starts. */
  private async carryOut(
    items: Work[],
    plan: DeliveryPlan,
    states: Map<string, DeliveryState>,
    events: Map<string, PendingEvent>,
    now: Date,
    leaseUntil: Date,
    unstarted: Map<string, PlannedAttempt>,
  ): Promise<Promise<void>[]> {
    // An Error until the end: a rejected promise must not exist before someone listens to it.
    const outcome = new Map<string, Promise<void> | Error>();
    const key = (kind: Work['kind'], id: string) => `${kind}:${id}`;

    // Events: judged into their webhooks (first attempts claimed) in one transaction. One another
    // worker judged meanwhile is carried by that worker.
    // Webhooks numbered per resource follow event order: an event an older unjudged event of its
    // resource comes before waits for it (judged by another batch or worker, or not relayed yet).
    const deferred = await this.outbox.waitingForOlder(plan.judge.filter((j) => j.ordered).map((j) => events.get(j.eventId)!));
    for (const eventId of deferred) {
      outcome.set(key('event', eventId), new RetryLaterError(OLDER_EVENT_WAIT_MS, 'an older event of its resource is not judged yet'));
    }
    const toJudge = plan.judge.filter((j) => !deferred.has(j.eventId));
    const judged =
      toJudge.length === 0
        ? new Set<string>()
        : await knexTransaction(this.em, (trx) =>
            this.outbox.judge(
              trx,
              toJudge.map((j) => ({ eventId: j.eventId, webhooks: j.webhooks.map((w) => w.row) })),
              now,
              leaseUntil,
            ),
          );
    for (const { eventId, webhooks } of toJudge) {
      if (!judged.has(eventId)) continue;
      outcome.set(
        key('event', eventId),
        this.carry(
          webhooks.map((w) => ({
            id: w.row.id,
            // An ordered webhook is due at once under its own job, where the claim checks its predecessors.
            run: w.first
              ? this.start(w.first, now, leaseUntil, unstarted)
              : w.row.ordered
                ? new RetryLaterError(0, 'ordered: the claim decides')
                : this.busy(w.row.organizationId, w.row.endpointId),
          })),
        ),
      );
    }

    // Webhooks: nothing to do, wait, or claim the due attempt (all in one statement) and make it.
    for (const [id, settled] of plan.settled) {
      const run =
        settled.kind === 'done'
          ? Promise.resolve()
          : settled.kind === 'busy'
            ? this.busy(states.get(id)!.organizationId, states.get(id)!.endpointId)
            : new RetryLaterError(settled.delayMs, 'not due yet');
      outcome.set(key('webhook', id), run);
    }
    try {
      const { claimed: claims, waiting } = await this.deliveries.claim(
        plan.claim.map((c) => ({
          id: c.attempt.id,
          expectedAttemptCount: c.expectedAttemptCount,
          previousStartedAt: c.attempt.previous.lastAttemptAt,
          numbered: c.attempt.sequence !== null,
        })),
        now,
        leaseUntil,
      );
      for (const { attempt } of plan.claim) {
        const claim = claims.get(attempt.id);
        if (waiting.has(attempt.id)) {
          // Behind a pending predecessor: not an attempt; woken when the predecessor ends.
          outcome.set(
            key('webhook', attempt.id),
            new RetryLaterError(
              ORDER_WAIT_MS.min + Math.round(Math.random() * ORDER_WAIT_MS.jitter),
              'waiting for the previous webhook of its resource',
            ),
          );
          continue;
        }
        // Unclaimed: claimed, finished or changed by someone else since it was read; their job carries it on.
        outcome.set(
          key('webhook', attempt.id),
          claim ? this.start({ ...attempt, ...claim }, now, leaseUntil, unstarted) : Promise.resolve(),
        );
      }
    } catch (error) {
      // The events' attempts above are claimed and must still be made; only these fail.
      for (const { attempt } of plan.claim) outcome.set(key('webhook', attempt.id), error as Error);
    }

    // Two jobs for one item in a batch (one per lane): the first carries it, the second is done.
    const seen = new Set<string>();
    return items.map((item) => {
      const k = key(item.kind, item.id);
      const result = seen.has(k) ? undefined : outcome.get(k);
      seen.add(k);
      if (result === undefined) return Promise.resolve();
      return result instanceof Error ? Promise.reject(result) : result;
    });
  }

  /**
   * The outcome of an event's job: every webhook the event created, side by side, none waiting
   * for another's answer. Each one that must be looked at again later gets a job under its own id
   * at once; should queueing it fail, it is pending in PostgreSQL and the reconciler queues it.
   */
  private carry(webhooks: { id: string; run: Promise<void> | Error }[]): Promise<void> {
    return Promise.all(
      webhooks.map(({ id, run }) =>
        (run instanceof Error ? Promise.reject(run) : run)
          .catch((reason: unknown) => this.requeues.add({ id, delayMs: delayOf(reason) }))
          .catch((error: unknown) => this.logger.warn({ err: error, webhookId: id }, 'could not queue a webhook; the reconciler will')),
      ),
    ).then(() => undefined);
  }

  /** Starts an attempt while the rest of the batch is still being handled; its caller listens later. */
  private start(attempt: PlannedAttempt, claimedAt: Date, leaseUntil: Date, unstarted: Map<string, PlannedAttempt>): Promise<void> {
    unstarted.delete(attempt.id);
    if (!attempt.permanent) this.admitted.remove(attempt);
    const running = this.attempt(attempt, claimedAt, leaseUntil);
    running.catch(() => undefined);
    return running;
  }

  /**
   * This batch's admission policy (see Admit; the rule is admitAttempt in fair-share.ts): an
   * attempt while its organization is below WEBHOOK_PER_ORGANIZATION_CONCURRENCY attempts in flight
   * and its endpoint below WEBHOOK_PER_RECEIVER_CONCURRENCY, or at either limit when the endpoint
   * answers fast (the attempt then waits briefly for the next freed slot); otherwise none now,
   * looked at again shortly, so neither a slow endpoint nor an organization of slow endpoints can
   * tie up the worker. Counts what every batch of the worker admitted and has not started yet
   * (batches run side by side), so together they plan no more than there is room for.
   */
  private admission(): Admit {
    return ({ organizationId, endpointId }) => {
      if (this.rateLimitedFor(endpointId) > 0) return 'none';
      const endpointAlready = this.admitted.endpoints.get(endpointId) ?? 0;
      const organizationAlready = this.admitted.organizations.get(organizationId) ?? 0;
      const organizationInFlight = this.organizations.count(organizationId);
      const others = this.organizations.activeCount() - (organizationInFlight > 0 ? 1 : 0);
      const admission = admitAttempt({
        endpointInFlight: this.limiter.count(endpointId) + endpointAlready,
        endpointLimit: this.config.webhook.perReceiverConcurrency,
        endpointIsFast: this.limiter.isFast(endpointId),
        organizationInFlight: organizationInFlight + organizationAlready,
        organizationLimit: organizationShare(this.config.webhook.perOrganizationConcurrency, this.config.webhook.concurrency, others),
      });
      if (admission === 'afterClaim') this.admitted.add({ organizationId, endpointId });
      return admission;
    };
  }

  /** Makes one claimed attempt and records its result; throws to have the job run again later. */
  private async attempt(claim: PlannedAttempt, claimedAt: Date, leaseUntil: Date): Promise<void> {
    if (claim.receiver !== null && !(await this.acquireSlots(claim.organizationId, claim.receiver))) {
      await this.deliveries.unclaim(claim.id, claim.attempt, claim.previous.lastAttemptAt, claim.previous.nextAttemptAt);
      throw this.busy(claim.organizationId, claim.endpointId);
    }
    if (claim.receiver !== null && !claim.permanent && !attemptMayStart(leaseUntil.getTime(), Date.now(), this.config.webhook.timeoutMs)) {
      // Too late to send on this claim (see attemptMayStart): give it back and look again at once.
      this.limiter.release(claim.receiver);
      this.organizations.release(claim.organizationId);
      await this.deliveries.unclaim(claim.id, claim.attempt, claim.previous.lastAttemptAt, claim.previous.nextAttemptAt);
      throw new RetryLaterError(0, 'the claim ran out before the attempt could start');
    }
    // The endpoint's rate limit last, right before the request, so the attempt reaches the
    // endpoint in the window it was counted in.
    let admittedAt: Date | undefined;
    const rateLimit = claim.permanent ? null : (claim.target?.rateLimitPerSecond ?? null);
    if (claim.receiver !== null && rateLimit !== null) {
      const place = await this.rates.take(claim.endpointId, rateLimit);
      if (!place.given) {
        // The endpoint had its attempts for this second: give the slots and the claim back (no
        // attempt is counted) and look again next second. Until then this worker claims none of
        // its webhooks, so the wait costs no write and no slot.
        this.rateFullUntil.set(claim.endpointId, Date.now() + place.waitMs);
        this.limiter.release(claim.receiver);
        this.organizations.release(claim.organizationId);
        await this.deliveries.unclaim(claim.id, claim.attempt, claim.previous.lastAttemptAt, claim.previous.nextAttemptAt);
        throw this.busy(claim.organizationId, claim.endpointId);
      }
      admittedAt = new Date(place.atMs);
    }
    const attempt = async (span: SpanHandle | null): Promise<SendResult> => {
      let sent: SendResult;
      if (claim.permanent) {
        sent = { outcome: 'blocked', status: null, error: claim.permanent, durationMs: 0, responseBody: null };
      } else {
        try {
          sent = await this.send(claim, span, leaseUntil, admittedAt);
        } finally {
          if (claim.receiver) {
            this.limiter.release(claim.receiver, sent! && sent.outcome !== 'blocked' ? sent.durationMs : undefined);
            this.organizations.release(claim.organizationId);
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
    const result = tracingEnabled()
      ? await inSpan('webhook.attempt', { kind: 'client', links: [claim.traceparent], attributes: attemptAttributes(claim) }, attempt)
      : await attempt(null);
    countAttempt(result.outcome);

    const now = new Date();
    const after = decideAfterAttempt(
      {
        outcome: result.outcome,
        permanent: claim.permanent !== null,
        attempt: claim.attempt,
        cycleStartAttempt: claim.cycleStartAttempt,
        retryAfterMs: retryAfterMs(result.status, result.retryAfter, now.getTime()),
      },
      this.config.webhook.retryScheduleMs,
    );
    const applied = await this.results.add({
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
      status: after.status,
      sequence: claim.sequence,
      nextAttemptAt: after.status === 'pending' ? new Date(now.getTime() + after.delayMs) : null,
      succeededAt: after.status === 'succeeded' ? now : null,
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
   * `signedAt`: the attempt's time when its endpoint's rate limit gave it its place (Redis's
   * clock, the window's), so its webhook-timestamp names the second it was counted in.
   */
  private async send(claim: PlannedAttempt, span: SpanHandle | null, leaseUntil: Date, signedAt = new Date()): Promise<SendResult> {
    const target = claim.target as DeliveryTarget;
    const blocked = temporaryBlock(target, claim.resourceType);
    if (blocked) return { outcome: 'blocked', status: null, error: blocked, durationMs: 0, responseBody: null };
    const headersAt = (at: Date) => this.headersOf(claim, target, span, at);
    if (target.auth === null) {
      return this.sender.send(target.url as string, claim.payload, headersAt(signedAt), clientTlsOf(target), Object.values(target.headers));
    }
    return this.sendWithToken(target, claim.payload, headersAt, signedAt, leaseUntil);
  }

  /**
   * Sends with `Authorization: Bearer <token>`. A 401 means the receiver no longer takes the
   * cached token (revoked, rotated, expired early): one new token and one more try, inside this
   * same attempt. That resend is a request to the endpoint like any other: it takes a place of its
   * own under the endpoint's rate limit (and is signed at it), and goes only while the claim's
   * lease still covers it; otherwise the attempt ends with the 401. A token that cannot be
   * obtained fails the attempt with the reason.
   */
  private async sendWithToken(
    target: DeliveryTarget,
    payload: string,
    headersAt: (signedAt: Date) => Record<string, string>,
    signedAt: Date,
    leaseUntil: Date,
  ): Promise<SendResult> {
    const client: OAuth2Client = { endpointId: target.endpointId, ...(target.auth as NonNullable<DeliveryTarget['auth']>) };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: unknown): SendResult => ({
      outcome: error instanceof TokenRequestError && error.blocked ? 'blocked' : 'network_error',
      status: null,
      error: `no OAuth2 token: ${error instanceof TokenRequestError ? error.message : 'the token request failed'}`,
      durationMs: elapsed(),
      responseBody: null,
    });
    let token: string;
    try {
      token = await this.tokens.token(client);
    } catch (error) {
      return failed(error);
    }
    const tls = clientTlsOf(target);
    // The tokens and custom header values never reach the delivery log, even echoed by the receiver.
    const secrets = [...Object.values(target.headers), token];
    const first = await this.sender.send(
      target.url as string,
      payload,
      { ...headersAt(signedAt), authorization: `Bearer ${token}` },
      tls,
      secrets,
    );
    if (first.status !== 401) return first;
    this.tokens.invalidate(client, token);
    try {
      token = await this.tokens.token(client);
    } catch (error) {
      return failed(error);
    }
    secrets.push(token);
    const resendAt = await this.resendPlace(target, leaseUntil);
    if (resendAt === null) {
      return {
        ...first,
        error: `${first.error ?? 'receiver answered 401'}; not sent again with a new token: no place under the endpoint's rateLimitPerSecond in time`,
        durationMs: elapsed(),
      };
    }
    const second = await this.sender.send(
      target.url as string,
      payload,
      { ...headersAt(resendAt), authorization: `Bearer ${token}` },
      tls,
      secrets,
    );
    return { ...second, durationMs: elapsed() };
  }

  /**
   * When the resend after a 401 goes: now, or at the place the endpoint's rate limit gives it
   * (Redis's clock, as for any attempt), waiting for the next window while the limit is used up.
   * Null when no place comes while the claim's lease still covers a request (see attemptMayStart).
   */
  private async resendPlace(target: DeliveryTarget, leaseUntil: Date): Promise<Date | null> {
    const mayStartAt = (atMs: number) => attemptMayStart(leaseUntil.getTime(), atMs, this.config.webhook.timeoutMs);
    if (!mayStartAt(Date.now())) return null;
    const limit = target.rateLimitPerSecond;
    if (limit === null) return new Date();
    for (;;) {
      const place = await this.rates.take(target.endpointId, limit);
      if (place.given) return mayStartAt(Date.now()) ? new Date(place.atMs) : null;
      this.rateFullUntil.set(target.endpointId, Date.now() + place.waitMs);
      if (!mayStartAt(Date.now() + place.waitMs)) return null;
      // Back at the very start of the next window, ahead of the waiting attempts (they spread over its first moments).
      await sleep(place.waitMs);
    }
  }

  private headersOf(claim: PlannedAttempt, target: DeliveryTarget, span: SpanHandle | null, signedAt: Date): Record<string, string> {
    return {
      // The endpoint's own headers first: none can name one of the service's (parseCustomHeaders
      // refuses them), and the service's below would win over any that did.
      ...customHeaders(target),
      'content-type': 'application/json; charset=utf-8',
      'user-agent': USER_AGENT,
      // Signed at send time: every attempt carries its own timestamp and the secrets of this moment.
      ...webhookSignatureHeaders(
        claim.id,
        claim.payload,
        { secret: target.secret as string, previous: target.previous, signingKeys: target.signingKeys },
        signedAt,
      ),
      'x-service-webhook-id': claim.id,
      'x-service-webhook-event-id': claim.eventId,
      'x-service-webhook-attempt': String(claim.attempt),
      // Ordered per resource: the webhook's place among those of its resource, the same on every retry.
      ...(claim.sequence !== null ? { 'x-service-webhook-sequence': String(claim.sequence) } : {}),
      // The attempt's own span, so a traced receiver continues the trace of this very attempt.
      ...(span ? { traceparent: span.traceparent } : {}),
    };
  }

  /**
   * One of the organization's slots, then one of the endpoint's: each now or, for a fast receiver,
   * the next one freed within the wait; false, holding neither, if either is missing.
   */
  private async acquireSlots(organizationId: string, receiver: string): Promise<boolean> {
    const fast = this.limiter.isFast(receiver);
    if (!this.organizations.tryAcquire(organizationId) && !(fast && (await this.organizations.waitForSlot(organizationId)))) return false;
    if (this.limiter.tryAcquire(receiver) || (fast && (await this.limiter.waitForSlot(receiver)))) return true;
    this.organizations.release(organizationId);
    return false;
  }

  /** busy() for a webhook of this endpoint, spread over the time it or its organization is expected to take to free a slot (at most the timeout). */
  private busy(organizationId: string, endpointId: string): RetryLaterError {
    const rateLimitedMs = this.rateLimitedFor(endpointId);
    if (rateLimitedMs > 0)
      return new RetryLaterError(rateLimitedDelayMs(rateLimitedMs), 'the endpoint’s rate limit is used up for this second');
    const expectedMs = Math.max(this.limiter.expectedMs(endpointId), this.organizations.expectedMs(organizationId));
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

  /**
   * Wakes the next webhook of each resource whose ordered webhook just ended, so the chain moves
   * on without waiting for its next look. A failure here only delays it until that look (or the
   * reconciler's, after a lost job).
   */
  private async releaseSuccessors(endedIds: string[]): Promise<void> {
    try {
      await this.jobs.wake(await this.deliveries.successors(endedIds));
    } catch (error) {
      this.logger.warn({ err: error, webhooks: endedIds.length }, 'could not wake the next ordered webhooks; they look again shortly');
    }
  }

  /** Writes the endpoints' health gathered since the last write; a failed write only delays auto-disable. */
  private async flushHealth(): Promise<void> {
    const changes = this.health.take();
    try {
      await this.deliveries.recordHealth(changes);
    } catch (error) {
      this.logger.warn({ err: error, endpoints: changes.length }, 'could not record endpoint health');
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.results.flush();
    this.requeues.flush();
    clearInterval(this.healthTimer);
    await this.flushHealth();
    await this.sender.close();
    this.rates.close();
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

/**
 * The endpoint's custom headers as sent. Authorization and Proxy-Authorization are refused as
 * custom headers (authentication goes through `auth`), but an endpoint saved before that may
 * still hold one: an Authorization beside `auth` would go out as a second one, and a
 * Proxy-Authorization would speak to the deployment's proxy, so those are left out.
 */
function customHeaders(target: DeliveryTarget): Record<string, string> {
  return Object.fromEntries(
    Object.entries(target.headers).filter(([name]) => {
      const lower = name.toLowerCase();
      return lower !== 'proxy-authorization' && !(lower === 'authorization' && target.auth !== null);
    }),
  );
}

/** The client certificate an endpoint presents, if any. */
function clientTlsOf(target: DeliveryTarget): ClientTls | null {
  return target.tls === null ? null : { endpointId: target.endpointId, ...target.tls };
}
