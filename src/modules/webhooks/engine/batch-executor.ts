// engine/: from a committed event to attempts and their retries (jobs, plan, executor, attempts, signing, sending).
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config';
import { knexTransaction } from '../../../database/raw-sql';
import { EventResources } from '../../domain-events/event-resources';
import { DeliveryTargetReader } from '../../webhook-endpoints/delivery-target.reader';
import { DeliveryClaimRepository, DeliveryState } from '../delivery-claim.repository';
import { AttemptRunner } from './attempt-runner';
import { AttemptSlots } from './attempt-slots';
import { admissionDemand, DeliveryPlan, needsResource, PendingEvent, PlannedAttempt, planDeliveries } from './delivery-plan';
import { MicroBatch } from './micro-batch';
import { OutboxEvents } from './outbox/outbox-events';
import { AttemptWebhookJob, delayOf, JudgeEventsJob, RetryLaterError, WebhookJobs } from './webhook-jobs';
import { attemptLeaseMs, furthestLegitimateAttemptMs } from './webhook.rules';

/**
 * Jobs arriving within a few milliseconds are judged and claimed together: a handful of
 * statements per batch instead of three per webhook. The wait is short enough not to show in
 * commit-to-receipt latency at a steady rate, and batches run side by side, so one held up (a row
 * lock, a slow statement) delays no other organization's webhooks.
 */
const JOB_BATCH = { maxItems: 100, maxWaitMs: 2 };
/** Webhooks to look at again later, queued together as their own jobs. */
const REQUEUE_BATCH = { maxItems: 200, maxWaitMs: 5 };
/**
 * How long a webhook ordered per resource waits behind a pending predecessor before it looks
 * again. Only a fallback: the end of the predecessor wakes it at once (AttemptResults).
 */
const ORDER_WAIT_MS = { min: 2000, jitter: 2000 };
/** How long an event waits before it is judged again when an older event of its resource is still unjudged. */
const OLDER_EVENT_WAIT_MS = 50;

/** One unit of a job: an event to judge or a webhook to attempt (a job carries one kind). */
interface Work {
  kind: 'event' | 'webhook';
  id: string;
}

/** What becomes of each unit of a batch: its run, or an Error until the end (a rejected promise must not exist before someone listens to it). */
type Outcomes = Map<string, Promise<void> | Error>;
const key = (kind: Work['kind'], id: string) => `${kind}:${id}`;

/**
 * The delivery engine's batch executor. Jobs arriving together are handled as one batch: one read
 * of their events, webhooks and endpoints; then planDeliveries (delivery-plan.ts, pure) says what
 * to write and which attempts to make; this class writes it (one transaction judging the events
 * into webhooks and claiming their first attempts, one statement claiming due attempts) and hands
 * every claimed attempt to the AttemptRunner, which makes it as its own POST. An event's job waits
 * for all of its webhooks' first attempts, and each one that must be looked at again later gets a
 * job under its own id as soon as that is known. PostgreSQL is the source of truth, so duplicate
 * or lost jobs can neither double-send an attempt nor drop a webhook.
 */
@Injectable()
export class WebhookBatchExecutor implements OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  /** How long a claimed attempt keeps others away; past it, a crashed attempt is retried. */
  private readonly leaseMs: number;
  private readonly furthestAttemptMs: number;
  private readonly work: MicroBatch<Work, void>;
  private readonly requeues: MicroBatch<{ id: string; delayMs: number }, undefined>;

  constructor(
    private readonly em: EntityManager,
    config: AppConfig,
    private readonly deliveries: DeliveryClaimRepository,
    private readonly outbox: OutboxEvents,
    private readonly targets: DeliveryTargetReader,
    private readonly jobs: WebhookJobs,
    private readonly slots: AttemptSlots,
    private readonly attempts: AttemptRunner,
    private readonly resources: EventResources,
  ) {
    this.leaseMs = attemptLeaseMs(config.webhook.timeoutMs);
    this.furthestAttemptMs = furthestLegitimateAttemptMs(config.webhook.retryScheduleMs, this.leaseMs);
    this.work = new MicroBatch((items) => this.handleBatch(items), JOB_BATCH);
    this.requeues = new MicroBatch(async (later) => {
      await this.jobs.addWebhooks(later);
      return later.map(() => undefined);
    }, REQUEUE_BATCH);
  }

  /** A judge-events job: resolves when its events need nothing more now; throws to be run again later. */
  async judgeEvents({ eventIds }: JudgeEventsJob): Promise<void> {
    await Promise.all(eventIds.map((id) => this.work.add({ kind: 'event', id })));
  }

  /** An attempt-webhook job: resolves when the webhook needs nothing more now; throws to be run again later. */
  attemptWebhook({ webhookId }: AttemptWebhookJob): Promise<void> {
    return this.work.add({ kind: 'webhook', id: webhookId });
  }

  private async handleBatch(items: Work[]): Promise<Promise<void>[]> {
    const eventIds = [...new Set(items.filter((w) => w.kind === 'event').map((w) => w.id))];
    const webhookIds = [...new Set(items.filter((w) => w.kind === 'webhook').map((w) => w.id))];
    const [states, events] = await Promise.all([this.deliveries.states(webhookIds), this.outbox.pending(eventIds)]);
    const organizations = [...[...states.values()].map((s) => s.organizationId), ...[...events.values()].map((e) => e.organizationId)];
    const endpoints = await this.targets.endpoints(organizations);
    const demand = admissionDemand({
      eventIds,
      webhookIds,
      states,
      events,
      endpoints,
      now: new Date(),
      furthestAttemptMs: this.furthestAttemptMs,
    });
    // The grants of the batch's endpoints (usually fresh: no Redis call) while the resources are read.
    const [data] = await Promise.all([
      this.resources.read([...events.values()].filter((e) => needsResource(e, endpoints.get(e.organizationId) ?? []))),
      this.slots.prepare(demand),
    ]);
    // After the grants: an attempt admitted under a grant ends (its claim's lease) before the grant expires in Redis.
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + this.leaseMs);
    const plan = planDeliveries({
      eventIds,
      webhookIds,
      states,
      events,
      endpoints,
      data,
      now,
      furthestAttemptMs: this.furthestAttemptMs,
      admit: this.slots.admission(),
    });
    // Admitted attempts that this batch does not start (their event or webhook was taken by
    // another worker, or a write failed) give their admission back at its end.
    const unstarted = new Map<string, PlannedAttempt>();
    for (const j of plan.judge) for (const w of j.webhooks) if (w.first && !w.first.permanent) unstarted.set(w.first.id, w.first);
    for (const c of plan.claim) if (!c.attempt.permanent) unstarted.set(c.attempt.id, c.attempt);
    try {
      const batch: Batch = { plan, states, events, now, leaseUntil, unstarted, outcomes: new Map() };
      await this.judge(batch);
      this.settle(batch);
      await this.claim(batch);
      return answers(items, batch.outcomes);
    } finally {
      for (const attempt of unstarted.values()) this.slots.unadmit(attempt);
    }
  }

  /**
   * Events: judged into their webhooks (first attempts claimed) in one transaction, and those
   * attempts started. One another worker judged meanwhile is carried by that worker. Webhooks
   * numbered per resource follow event order: an event that an older unjudged event of its
   * resource comes before waits for it (judged by another batch or worker, or not relayed yet).
   */
  private async judge(batch: Batch): Promise<void> {
    const { plan, events, now, leaseUntil, outcomes } = batch;
    const deferred = await this.outbox.waitingForOlder(plan.judge.filter((j) => j.ordered).map((j) => events.get(j.eventId)!));
    for (const eventId of deferred) {
      outcomes.set(key('event', eventId), new RetryLaterError(OLDER_EVENT_WAIT_MS, 'an older event of its resource is not judged yet'));
    }
    const toJudge = plan.judge.filter((j) => !deferred.has(j.eventId));
    if (toJudge.length === 0) return;
    const judged = await knexTransaction(this.em, (trx) =>
      this.outbox.judge(
        trx,
        toJudge.map((j) => ({ eventId: j.eventId, webhooks: j.webhooks.map((w) => w.row) })),
        now,
        leaseUntil,
      ),
    );
    for (const { eventId, webhooks } of toJudge) {
      if (!judged.has(eventId)) continue;
      const runs = webhooks.map((w) => ({
        id: w.row.id,
        // An ordered webhook is due at once under its own job, where the claim checks its predecessors.
        run: w.first
          ? this.start(batch, w.first)
          : w.row.ordered
            ? new RetryLaterError(0, 'ordered: the claim decides')
            : this.slots.busy(w.row.organizationId, w.row.endpointId),
      }));
      outcomes.set(key('event', eventId), this.carry(runs));
    }
  }

  /** Webhooks with nothing to claim now: done, busy (no room), or not due yet. */
  private settle({ plan, states, outcomes }: Batch): void {
    for (const [id, settled] of plan.settled) {
      const state = states.get(id)!;
      const run =
        settled.kind === 'done'
          ? Promise.resolve()
          : settled.kind === 'busy'
            ? this.slots.busy(state.organizationId, state.endpointId)
            : new RetryLaterError(settled.delayMs, 'not due yet');
      outcomes.set(key('webhook', id), run);
    }
  }

  /** Webhooks due now: their attempts claimed in one statement, and each claimed one started. */
  private async claim(batch: Batch): Promise<void> {
    const { plan, now, leaseUntil, outcomes } = batch;
    try {
      const { claimed, waiting } = await this.deliveries.claim(
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
        const claim = claimed.get(attempt.id);
        if (waiting.has(attempt.id)) {
          // Behind a pending predecessor: not an attempt; woken when the predecessor ends.
          const delayMs = ORDER_WAIT_MS.min + Math.round(Math.random() * ORDER_WAIT_MS.jitter);
          outcomes.set(key('webhook', attempt.id), new RetryLaterError(delayMs, 'waiting for the previous webhook of its resource'));
          continue;
        }
        // Unclaimed: claimed, finished or changed by someone else since it was read; their job carries it on.
        outcomes.set(key('webhook', attempt.id), claim ? this.start(batch, { ...attempt, ...claim }) : Promise.resolve());
      }
    } catch (error) {
      // The events' attempts are claimed and must still be made; only these fail.
      for (const { attempt } of plan.claim) outcomes.set(key('webhook', attempt.id), error as Error);
    }
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
  private start(batch: Batch, attempt: PlannedAttempt): Promise<void> {
    batch.unstarted.delete(attempt.id);
    this.slots.unadmit(attempt);
    const running = this.attempts.run(attempt, batch.now, batch.leaseUntil);
    running.catch(() => undefined);
    return running;
  }

  onModuleDestroy(): void {
    this.requeues.flush();
  }
}

/** One batch as it is carried out; `unstarted` loses each attempt as it starts. */
interface Batch {
  plan: DeliveryPlan;
  states: Map<string, DeliveryState>;
  events: Map<string, PendingEvent>;
  now: Date;
  leaseUntil: Date;
  unstarted: Map<string, PlannedAttempt>;
  outcomes: Outcomes;
}

/** Each job's answer, in the order of `items`. Two jobs for one item in a batch (one per lane): the first carries it, the second is done. */
function answers(items: Work[], outcomes: Outcomes): Promise<void>[] {
  const seen = new Set<string>();
  return items.map((item) => {
    const k = key(item.kind, item.id);
    const result = seen.has(k) ? undefined : outcomes.get(k);
    seen.add(k);
    if (result === undefined) return Promise.resolve();
    return result instanceof Error ? Promise.reject(result) : result;
  });
}
