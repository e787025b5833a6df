import { EntityManager } from '@mikro-orm/postgresql';
import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Queue } from 'bull';
import { formatDbTimestamp } from '../../common/time';
import { AppConfig } from '../../config/app-config';
import { DomainEventOutbox, PendingEvent } from '../domain-events/domain-event.outbox';
import { DeliveryTarget, DeliveryTargetReader } from '../webhook-config/delivery-target.reader';
import { EndpointHealthTally } from './endpoint-health';
import { MicroBatch } from './micro-batch';
import { ReceiverLimiter } from './receiver-limiter';
import { AttemptResult, DeliveryState, NewDelivery, WebhookDeliveryRepository } from './webhook-delivery.repository';
import { countAttempt, webhookDeliveryLatency } from './webhook-metrics';
import { deliverJobOptions, DELIVER_JOB, DeliverJobData, RetryLaterError, WEBHOOK_QUEUE } from './webhook-queue';
import { SendResult, WebhookSender } from './webhook-sender';
import { webhookSignatureHeaders } from './webhook-signature';
import {
  attemptLeaseMs,
  buildWebhookBody,
  decideAfterAttempt,
  decideAttempt,
  decideEvent,
  furthestLegitimateAttemptMs,
  permanentFailure,
  temporaryBlock,
  webhookIdFor,
} from './webhook.rules';

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
 * recorded together: a handful of statements per batch instead of three per webhook. The waits
 * are short enough not to show in commit-to-receipt latency at a steady rate.
 */
const JOB_BATCH = { maxItems: 100, maxWaitMs: 2 };
const RESULT_BATCH = { maxItems: 200, maxWaitMs: 3 };
/** How often a worker writes down what it learned of endpoints' runs of failures (auto-disable). */
const HEALTH_FLUSH_MS = 1000;
/** Webhooks to look at again later, queued together as their own jobs. */
const REQUEUE_BATCH = { maxItems: 200, maxWaitMs: 5 };

/**
 * 'afterClaim': take an endpoint slot once the attempt is claimed, so a slot is held only while
 * its request is in flight, never across a batch's statements; 'free': no slot to take (no
 * request will be made); 'none': the endpoint is at its limit and slow, so no attempt now.
 */
type Slot = 'free' | 'afterClaim' | 'none';

/** One attempt this worker has claimed and is about to make. */
interface Claimed {
  id: string;
  eventId: string;
  organizationId: string;
  endpointId: string;
  attempt: number;
  cycleStartAttempt: number;
  payload: string;
  eventCreatedAt: Date;
  resourceType: string;
  /** Null when the endpoint no longer exists (a permanent failure). */
  target: DeliveryTarget | null;
  /** The endpoint whose concurrency budget the attempt uses; null when no request is made. */
  receiver: string | null;
  slot: Slot;
  /** Set when the attempt cannot succeed as configured: recorded failed without a request. */
  permanent: string | null;
  /** The times before the claim, to give the claim back if no slot frees up. */
  previous: { lastAttemptAt: string | null; nextAttemptAt: string | Date | null };
}

/**
 * The delivery worker's orchestrator. A Bull job says "look at this webhook now" (for a new
 * event, the id is the event's); jobs arriving together are handled as one batch: one read of
 * their webhooks, events and endpoints, one statement judging new events into one webhook per
 * matching endpoint (and claiming their first attempts), one claiming due attempts; then every
 * webhook is its own POST, and results are recorded in batches, each only if its attempt is still
 * the current one. Concurrency is limited per endpoint, so one endpoint's failures never hold up
 * another's webhooks, even on the same host. The rules live in webhook.rules.ts, the SQL in the
 * repositories; PostgreSQL is the source of truth, so duplicate or lost jobs can neither
 * double-send an attempt nor drop a webhook.
 */
@Injectable()
export class WebhookDeliveryService implements OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly limiter: ReceiverLimiter;
  private readonly sender: WebhookSender;
  /** How long a claimed attempt keeps others away; past it, a crashed attempt is retried. */
  private readonly leaseMs: number;
  private readonly furthestAttemptMs: number;
  private readonly jobs: MicroBatch<string, void>;
  private readonly results: MicroBatch<AttemptResult, boolean>;
  private readonly requeues: MicroBatch<{ id: string; delayMs: number }, undefined>;
  /** Attempts of fanned-out webhooks running outside any job, awaited when the worker stops. */
  private readonly detached = new Set<Promise<void>>();
  private readonly health = new EndpointHealthTally();
  private readonly healthTimer: NodeJS.Timeout;

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly outbox: DomainEventOutbox,
    private readonly targets: DeliveryTargetReader,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<DeliverJobData>,
  ) {
    // Keyed by endpoint id: two endpoints on one host have a budget each.
    this.limiter = new ReceiverLimiter(config.webhook.perReceiverConcurrency, {
      fastReceiverMs: FAST_RECEIVER_MS,
      maxWaitMs: MAX_SLOT_WAIT_MS,
    });
    this.sender = new WebhookSender({
      timeoutMs: config.webhook.timeoutMs,
      allowHttp: config.webhook.allowHttp,
      allowPrivateNetworks: config.webhook.allowPrivateNetworks,
      allowedPorts: config.webhook.allowedPorts,
    });
    this.leaseMs = attemptLeaseMs(config.webhook.timeoutMs);
    this.furthestAttemptMs = furthestLegitimateAttemptMs(config.webhook.retryScheduleMs, this.leaseMs);
    this.jobs = new MicroBatch((ids) => this.handleBatch(ids), JOB_BATCH);
    this.results = new MicroBatch(async (rows) => {
      const applied = await this.deliveries.recordResults(rows);
      const at = new Date();
      for (const row of rows) {
        this.health.add(
          {
            endpointId: row.endpointId,
            organizationId: row.organizationId,
            succeeded: row.status === 'succeeded',
            firstOfCycle: row.attempt === row.cycleStartAttempt + 1,
          },
          at,
        );
      }
      return rows.map((row) => applied.has(row.id));
    }, RESULT_BATCH);
    this.healthTimer = setInterval(() => void this.flushHealth(), HEALTH_FLUSH_MS);
    this.healthTimer.unref();
    this.requeues = new MicroBatch(async (later) => {
      await this.requeue(later);
      return later.map(() => undefined);
    }, REQUEUE_BATCH);
  }

  /** Job entry point: resolves when the webhook needs nothing more now; throws to be retried later. */
  handle(webhookId: string): Promise<void> {
    return this.jobs.add(webhookId);
  }

  /**
   * Entry point of a group job: each webhook as if it had its own job; one that must be looked
   * at again later gets a job of its own with that delay (its id, so recovery and redelivery
   * find it) as soon as it is known, not once the whole group is done. Throws, for Bull to run
   * the whole group again, only if such a job could not be queued: every webhook's state is in
   * PostgreSQL, so running a group twice is harmless.
   */
  async handleGroup(webhookIds: readonly string[]): Promise<void> {
    await Promise.all(
      webhookIds.map((id) => this.handle(id).catch((reason: unknown) => this.requeues.add({ id, delayMs: delayOf(reason) }))),
    );
  }

  private async handleBatch(ids: string[]): Promise<Promise<void>[]> {
    const unique = [...new Set(ids)];
    const [states, events] = await Promise.all([this.deliveries.states(unique), this.outbox.pending(unique)]);
    const organizations = [...[...states.values()].map((s) => s.organizationId), ...[...events.values()].map((e) => e.organizationId)];
    const endpoints = await this.targets.endpoints(organizations);

    // An Error until the end: a rejected promise must not exist before someone listens to it.
    const outcome = new Map<string, Promise<void> | Error>();
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + this.leaseMs);
    /** Attempts this batch plans per endpoint, so it claims no more than a slow endpoint has room for. */
    const planned = new Map<string, number>();

    // New events: judged into one webhook per matching endpoint and, where a slot allows,
    // claimed, all in one transaction.
    const judging = unique.filter((id) => !states.has(id) && events.has(id));
    const created: { row: NewDelivery; claimed: Claimed | null }[] = [];
    for (const eventId of judging) {
      const event = events.get(eventId) as PendingEvent;
      for (const target of endpoints.get(event.organizationId) ?? []) {
        if (decideEvent(event, target).kind === 'skip') continue;
        const id = webhookIdFor(eventId, target.endpointId, target.isDefault);
        const permanent = permanentFailure(target);
        const receiver = permanent ? null : target.endpointId;
        const slot: Slot = permanent ? 'free' : this.planSlot(receiver, planned);
        const payload = buildWebhookBody({
          organizationId: event.organizationId,
          action: event.action,
          id,
          resourceId: event.resourceId,
          resourceType: event.resourceType,
          createdAtUtc: formatDbTimestamp(event.createdAt),
          changes: event.changes,
        });
        const claimed = slot !== 'none';
        created.push({
          row: { ...event, id, eventId, endpointId: target.endpointId, payload, eventCreatedAt: event.createdAt, claimed },
          claimed: claimed
            ? {
                id,
                eventId,
                organizationId: event.organizationId,
                endpointId: target.endpointId,
                attempt: 1,
                cycleStartAttempt: 0,
                payload,
                eventCreatedAt: new Date(event.createdAt),
                resourceType: event.resourceType,
                target,
                receiver,
                slot,
                permanent,
                previous: { lastAttemptAt: null, nextAttemptAt: now },
              }
            : null,
        });
      }
    }
    let judged = new Set<string>();
    if (judging.length > 0) {
      judged = await this.em.getKnex().transaction(async (trx) => {
        const marked = await this.outbox.markProcessed(trx, judging, now);
        await this.deliveries.createJudged(
          trx,
          created.filter((c) => marked.has(c.row.eventId)).map((c) => c.row),
          now,
          leaseUntil,
        );
        return marked;
      });
    }
    const createdByEvent = new Map<string, { row: NewDelivery; claimed: Claimed | null }[]>();
    for (const c of created) {
      const siblings = createdByEvent.get(c.row.eventId);
      if (siblings) siblings.push(c);
      else createdByEvent.set(c.row.eventId, [c]);
    }
    for (const eventId of judging) {
      if (!judged.has(eventId)) {
        // Judged by another worker between our read and our write: follow its outcome shortly.
        outcome.set(eventId, new RetryLaterError(200, 'another worker judged this event'));
        continue;
      }
      const webhooks = (createdByEvent.get(eventId) ?? []).map((c) => ({
        id: c.row.id,
        outcome: c.claimed ? this.start(c.claimed) : busy(),
      }));
      outcome.set(eventId, this.fanOut(eventId, webhooks));
    }

    // Existing webhooks: the next attempt of each that is due, claimed in one statement.
    const toClaim: { state: DeliveryState; claimed: Claimed }[] = [];
    const nowMs = now.getTime();
    for (const id of unique) {
      const state = states.get(id);
      if (!state) {
        if (!outcome.has(id)) outcome.set(id, Promise.resolve()); // no such event or webhook (pruned, or judged: nothing to send)
        continue;
      }
      const decision = decideAttempt(
        { status: state.status, nextAttemptAt: state.nextAttemptAt ? new Date(state.nextAttemptAt) : null },
        nowMs,
        this.furthestAttemptMs,
      );
      if (decision.kind === 'none') {
        outcome.set(id, Promise.resolve());
        continue;
      }
      if (decision.kind === 'wait') {
        outcome.set(id, new RetryLaterError(decision.dueInMs, 'not due yet'));
        continue;
      }
      // Read at send time, never stored in the job: the newest url and secret always apply.
      const target = (endpoints.get(state.organizationId) ?? []).find((e) => e.endpointId === state.endpointId) ?? null;
      const permanent = permanentFailure(target);
      const receiver = permanent ? null : state.endpointId;
      const slot: Slot = permanent ? 'free' : this.planSlot(receiver, planned);
      if (slot === 'none') {
        outcome.set(id, busy());
        continue;
      }
      toClaim.push({
        state,
        claimed: {
          id,
          eventId: state.eventId,
          organizationId: state.organizationId,
          endpointId: state.endpointId,
          attempt: 0,
          cycleStartAttempt: 0,
          payload: state.payload,
          eventCreatedAt: new Date(state.eventCreatedAt),
          resourceType: state.resourceType,
          target,
          receiver,
          slot,
          permanent,
          previous: { lastAttemptAt: state.lastAttemptAt, nextAttemptAt: state.nextAttemptAt },
        },
      });
    }
    let claims = new Map<string, { attempt: number; cycleStartAttempt: number }>();
    try {
      claims = await this.deliveries.claim(
        toClaim.map((c) => ({ id: c.state.id, expectedAttemptCount: c.state.attemptCount })),
        now,
        leaseUntil,
      );
    } catch (error) {
      // The judged ones above are claimed and must still be attempted; only the rest fail.
      for (const c of toClaim) outcome.set(c.state.id, error as Error);
    }
    for (const { state, claimed } of toClaim) {
      if (outcome.has(state.id)) continue;
      const claim = claims.get(state.id);
      if (!claim) {
        // Claimed, finished or changed by someone else since it was read: their job carries it on.
        outcome.set(state.id, Promise.resolve());
        continue;
      }
      outcome.set(state.id, this.start({ ...claimed, ...claim }));
    }

    // Two jobs for one webhook in a batch (one per lane): the first carries it, the second is done.
    const seen = new Set<string>();
    return ids.map((id) => {
      if (seen.has(id)) return Promise.resolve();
      seen.add(id);
      const result = outcome.get(id) as Promise<void> | Error;
      return result instanceof Error ? Promise.reject(result) : result;
    });
  }

  /**
   * The outcome of a new event's job: the default endpoint's webhook (whose id is the event's),
   * if any. The event's other webhooks run beside it, outside the job, so that no endpoint waits
   * for another's answer (or timeout); each one that must be looked at again later gets a job
   * under its own id as soon as that is known. Should queueing it fail, the webhook is pending
   * in PostgreSQL and the reconciler queues it.
   */
  private fanOut(eventId: string, webhooks: { id: string; outcome: Promise<void> | Error }[]): Promise<void> | Error {
    let own: Promise<void> | Error = Promise.resolve();
    for (const webhook of webhooks) {
      if (webhook.id === eventId) {
        own = webhook.outcome;
        continue;
      }
      const running = (webhook.outcome instanceof Error ? Promise.reject(webhook.outcome) : webhook.outcome)
        .catch((reason: unknown) => this.requeues.add({ id: webhook.id, delayMs: delayOf(reason) }))
        .catch((error: unknown) =>
          this.logger.warn({ err: error, webhookId: webhook.id }, 'could not queue a webhook; the reconciler will'),
        )
        .finally(() => this.detached.delete(running));
      this.detached.add(running);
    }
    return own;
  }

  /** Starts an attempt while the rest of the batch is still being handled; its caller listens later. */
  private start(claim: Claimed): Promise<void> {
    const running = this.attempt(claim);
    running.catch(() => undefined);
    return running;
  }

  private async requeue(later: readonly { id: string; delayMs: number }[]): Promise<void> {
    await this.queue.addBulk(
      later.map(({ id, delayMs }) => ({ name: DELIVER_JOB, data: { webhookId: id }, opts: deliverJobOptions(id, undefined, delayMs) })),
    );
  }

  /** Makes one claimed attempt and records its result; throws to have the job run again later. */
  private async attempt(claim: Claimed): Promise<void> {
    if (claim.slot === 'afterClaim' && !(await this.acquireSlot(claim.receiver as string))) {
      await this.deliveries.unclaim(claim.id, claim.attempt, claim.previous.lastAttemptAt, claim.previous.nextAttemptAt);
      throw busy();
    }
    let result: SendResult;
    if (claim.permanent) {
      result = { outcome: 'blocked', status: null, error: claim.permanent, durationMs: 0 };
    } else {
      try {
        result = await this.send(claim);
      } finally {
        if (claim.receiver) this.limiter.release(claim.receiver, result! && result.outcome !== 'blocked' ? result.durationMs : undefined);
      }
    }
    countAttempt(result.outcome);

    const after = decideAfterAttempt(
      { outcome: result.outcome, permanent: claim.permanent !== null, attempt: claim.attempt, cycleStartAttempt: claim.cycleStartAttempt },
      this.config.webhook.retryScheduleMs,
    );
    const now = new Date();
    const applied = await this.results.add({
      id: claim.id,
      organizationId: claim.organizationId,
      endpointId: claim.endpointId,
      attempt: claim.attempt,
      cycleStartAttempt: claim.cycleStartAttempt,
      durationMs: result.durationMs,
      responseStatus: result.status,
      error: result.error,
      status: after.status,
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

  private async send(claim: Claimed): Promise<SendResult> {
    const target = claim.target as DeliveryTarget;
    const blocked = temporaryBlock(target, claim.resourceType);
    if (blocked) return { outcome: 'blocked', status: null, error: blocked, durationMs: 0 };
    return this.sender.send(target.url as string, claim.payload, {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': USER_AGENT,
      // Signed at send time: every attempt carries its own timestamp and the secrets of this moment.
      ...webhookSignatureHeaders(claim.id, claim.payload, { secret: target.secret as string, previous: target.previous }, new Date()),
      'x-service-webhook-id': claim.id,
      'x-service-webhook-event-id': claim.eventId,
      'x-service-webhook-attempt': String(claim.attempt),
    });
  }

  /**
   * Whether to claim an attempt for this endpoint: yes while it has a free slot, or when it is at
   * its limit but answers fast (the attempt then waits briefly for the next freed slot); a slow
   * or unknown endpoint at its limit gets no attempt now, so it cannot tie up the worker.
   */
  private planSlot(receiver: string | null, planned: Map<string, number>): Slot {
    if (receiver === null) return 'free';
    const already = planned.get(receiver) ?? 0;
    const hasRoom = this.limiter.count(receiver) + already < this.config.webhook.perReceiverConcurrency;
    if (!hasRoom && !this.limiter.isFast(receiver)) return 'none';
    planned.set(receiver, already + 1);
    return 'afterClaim';
  }

  /** A slot now, or for a fast receiver the next one freed within the wait; false if none. */
  private async acquireSlot(receiver: string): Promise<boolean> {
    if (this.limiter.tryAcquire(receiver)) return true;
    return this.limiter.isFast(receiver) && (await this.limiter.waitForSlot(receiver));
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
    await Promise.allSettled([...this.detached]);
    this.results.flush();
    this.requeues.flush();
    clearInterval(this.healthTimer);
    await this.flushHealth();
    await this.sender.close();
  }
}

/** No attempt was made: come back shortly without spending one of the schedule's attempts. */
function busy(): RetryLaterError {
  return new RetryLaterError(100 + Math.round(Math.random() * 400), 'receiver has its maximum of webhooks in flight');
}

/** The delay a failed webhook asked for before its next look, or a second. */
function delayOf(reason: unknown): number {
  const delayMs = (reason as { delayMs?: unknown } | null)?.delayMs;
  return typeof delayMs === 'number' ? Math.max(1, delayMs) : 1000;
}
