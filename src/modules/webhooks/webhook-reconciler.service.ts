import { EntityManager } from '@mikro-orm/postgresql';
import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';
import { AppConfig } from '../../config/app-config';
import { deliverJobOptions, DELIVER_JOB, DeliverJobData, WEBHOOK_BULK_QUEUE, WEBHOOK_QUEUE } from './webhook-queue';
import { attemptLeaseMs, furthestLegitimateAttemptMs } from './webhook.rules';

const BATCH_SIZE = 1000;
const PRUNE_EVERY_RUNS = 20;

/**
 * PostgreSQL is the source of truth; Redis only carries work. This loop re-enqueues anything
 * PostgreSQL says is due but that no job is moving: events not yet judged and deliveries whose
 * next attempt is overdue (Redis emptied, a worker killed mid-attempt). Job ids make re-adding a
 * job that still exists a no-op. It also prunes the delivery log past its retention.
 */
@Injectable()
export class WebhookReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookReconciler');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private runs = 0;

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<DeliverJobData>,
    @InjectQueue(WEBHOOK_BULK_QUEUE) private readonly bulkQueue: Queue<DeliverJobData>,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.reconcile()
        .then(() => undefined)
        .catch((error: unknown) => this.logger.warn({ err: error }, 'reconcile pass failed'))
        .finally(() => (this.running = null));
    }, this.config.webhook.reconcileIntervalMs);
    this.timer.unref();
  }

  async reconcile(): Promise<number> {
    const knex = this.em.getKnex();
    const graceMs = this.config.webhook.reconcileIntervalMs;
    const cutoff = new Date(Date.now() - graceMs);
    const events: { id: string }[] = await knex('domain_event')
      .whereNull('processed_at')
      .whereNotNull('relayed_at')
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(BATCH_SIZE)
      .select('id');
    // Far-future attempts were scheduled by a host whose clock ran ahead: due now (see claim).
    const skewedAfter = new Date(
      Date.now() + furthestLegitimateAttemptMs(this.config.webhook.retryScheduleMs, attemptLeaseMs(this.config.webhook.timeoutMs)),
    );
    const deliveries: { id: string }[] = await knex('webhook_delivery')
      .where('status', 'pending')
      .where((q) => q.where('next_attempt_at', '<', cutoff).orWhere('next_attempt_at', '>', skewedAfter))
      .orderBy('next_attempt_at')
      .limit(BATCH_SIZE)
      .select('id');
    // A burst waiting its turn in the bulk lane is not lost: leave it there rather than queue a
    // second copy ahead of other organizations. Anything else under the id is cleared first, or
    // adding the job below would be a no-op.
    const candidates = [...events, ...deliveries].map((row) => row.id);
    const moving = await Promise.all(
      candidates.map(async (id) => (await isMoving(this.bulkQueue, id)) || (await isMoving(this.queue, id))),
    );
    const ids = candidates.filter((_, i) => !moving[i]);
    if (ids.length > 0) {
      await this.queue.addBulk(ids.map((id) => ({ name: DELIVER_JOB, data: { webhookId: id }, opts: deliverJobOptions(id) })));
    }
    this.runs += 1;
    if (this.runs % PRUNE_EVERY_RUNS === 1) await this.prune();
    return ids.length;
  }

  async prune(): Promise<void> {
    const knex = this.em.getKnex();
    const before = new Date(Date.now() - this.config.webhook.retentionMs);
    await knex('webhook_delivery').whereIn('status', ['succeeded', 'failed']).where('created_at', '<', before).delete();
    await knex('domain_event').whereNotNull('processed_at').where('created_at', '<', before).delete();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

const MOVING_STATES = new Set(['waiting', 'delayed', 'active', 'paused']);

/**
 * Whether a job under this id will still run. A job is judged by its state, not by its key: when
 * Redis is emptied while a job is in flight, Bull's failure bookkeeping writes part of the job
 * hash back (failedReason, stacktrace, attemptsMade, processedOn) with the job in no list. Such a
 * fragment, like a finished job, would make re-adding the id a no-op forever, so it is removed.
 */
export async function isMoving(queue: Queue<DeliverJobData>, id: string): Promise<boolean> {
  const job = await queue.getJob(id);
  if (!job) return false;
  if (MOVING_STATES.has(await job.getState())) return true;
  // Bull refuses to remove a job whose lock is held: a worker is on it right now.
  return job.remove().then(
    () => false,
    () => true,
  );
}
