// maintenance/: periodic recovery of lost work, auto-disable of failing endpoints and pruning of the delivery log.
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Periodic } from '../../../common/scheduling/periodic';
import { DAY_MS, utcDay } from '../../../database/time-partitions';
import { AppConfig } from '../../../config/app-config';
import { DirectSessions } from '../../../database/direct-sessions';
import { LOCK_KEYS } from '../../../database/lock-keys';
import { DomainEventStore } from '../../domain-events/domain-event.store';
import { DeliveryTargetReader } from '../../webhook-endpoints/delivery-target.reader';
import { WebhookEndpointsService } from '../../webhook-endpoints/webhook-endpoints.service';
import { DeliveryMaintenanceRepository } from '../delivery-maintenance.repository';
import { WebhookJobs } from '../engine/webhook-jobs';
import { attemptLeaseMs, furthestLegitimateAttemptMs } from '../engine/webhook.rules';

const BATCH_SIZE = 1000;
/** Per organization and pass: one organization's backlog leaves room for everyone else's. */
const PER_ORGANIZATION = 100;
const PRUNE_EVERY_RUNS = 20;
/** Rows per statement deleting history outside the day partitions: each its own short transaction. */
const PRUNE_BATCH = 5000;
/** Day partitions are made this many days past today, so a pass missed for a day or two costs nothing. */
const PARTITIONS_AHEAD_DAYS = 3;
/** Failed webhooks an endpoint's run of failures must count before it is disabled (docs/WEBHOOKS.md "Several endpoints: fan-out, filters, replay, auto-disable"). */
export const AUTO_DISABLE_MIN_FAILED_WEBHOOKS = 10;

/**
 * PostgreSQL is the source of truth; Redis only carries work. This loop re-enqueues anything
 * PostgreSQL says is due but that no job is moving: events not yet judged and deliveries whose
 * next attempt is overdue (Redis emptied, a worker killed mid-attempt), a bounded number per
 * organization per pass so one organization's backlog cannot starve the others. It also prunes
 * the delivery log past its retention, a day partition at a time. Only one worker of a deployment runs a pass
 * at a time (a PostgreSQL advisory lock held for the pass; a worker that dies releases it with
 * its connection). The same pass disables endpoints whose every attempt has failed for
 * WEBHOOK_AUTO_DISABLE_AFTER.
 */
@Injectable()
export class WebhookReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookReconciler');
  private readonly schedule: Periodic;
  private runs = 0;

  constructor(
    private readonly em: EntityManager,
    private readonly sessions: DirectSessions,
    private readonly config: AppConfig,
    private readonly events: DomainEventStore,
    private readonly deliveries: DeliveryMaintenanceRepository,
    private readonly targets: DeliveryTargetReader,
    private readonly endpointsService: WebhookEndpointsService,
    private readonly jobs: WebhookJobs,
  ) {
    this.schedule = new Periodic({
      intervalMs: config.webhook.reconcileIntervalMs,
      run: () =>
        this.withLock(async () => {
          await this.reconcile();
          await this.autoDisable();
          this.runs += 1;
          if (this.runs % PRUNE_EVERY_RUNS === 1) await this.prune();
        }),
      logger: this.logger,
      failure: 'reconcile pass failed',
    });
  }

  onApplicationBootstrap(): void {
    this.schedule.start();
  }

  /** Runs `work` if no other worker holds the reconciler's lock; null when another one does. */
  withLock<T>(work: () => Promise<T>): Promise<T | null> {
    return this.sessions.withAdvisoryLock(LOCK_KEYS.webhookReconcile, work);
  }

  /** One pass; returns the ids it queued. */
  async reconcile(): Promise<string[]> {
    const graceMs = this.config.webhook.reconcileIntervalMs;
    const cutoff = new Date(Date.now() - graceMs);
    // Far-future attempts were scheduled by a host whose clock ran ahead: due now (see decideAttempt).
    const skewedAfter = new Date(
      Date.now() + furthestLegitimateAttemptMs(this.config.webhook.retryScheduleMs, attemptLeaseMs(this.config.webhook.timeoutMs)),
    );
    const [events, overdue] = await Promise.all([
      this.events.stuck(cutoff, BATCH_SIZE, PER_ORGANIZATION),
      this.deliveries.overdue(cutoff, skewedAfter, BATCH_SIZE, PER_ORGANIZATION),
    ]);
    return this.jobs.addIfIdle({ eventIds: events.map((row) => row.id), webhookIds: [...new Set(overdue.map((row) => row.id))] });
  }

  /**
   * Disables every enabled endpoint whose every attempt has failed for WEBHOOK_AUTO_DISABLE_AFTER
   * with at least ten failed webhooks, counting from its last change at the earliest (so a
   * re-enabled endpoint gets a whole window again). Returns the ids disabled.
   */
  async autoDisable(): Promise<string[]> {
    const windowMs = this.config.webhook.autoDisableAfterMs;
    const candidates = await this.deliveries.failingEndpoints(windowMs, AUTO_DISABLE_MIN_FAILED_WEBHOOKS);
    if (candidates.length === 0) return [];
    const endpoints = await this.targets.endpoints(candidates.map((c) => c.organizationId));
    const now = new Date();
    const due = candidates.filter((c) => {
      const target = endpoints.get(c.organizationId)?.find((e) => e.endpointId === c.endpointId);
      return target !== undefined && target.enabled && target.updatedAt.getTime() <= now.getTime() - windowMs;
    });
    if (due.length === 0) return [];
    const disabled = await this.endpointsService.disableFailingEndpoints(
      due.map(({ organizationId, endpointId }) => ({ organizationId, endpointId })),
      now,
    );
    for (const endpoint of disabled)
      this.logger.warn(endpoint, 'webhook endpoint disabled: every attempt failed for the auto-disable window');
    return disabled.map((endpoint) => endpoint.endpointId);
  }

  /**
   * Keeps the history's day partitions made PARTITIONS_AHEAD_DAYS ahead, and drops the days past
   * the retention (webhooks and attempts first, then their events). Returns the partitions dropped
   * and the rows deleted outside them.
   */
  async prune(now = new Date()): Promise<{ partitions: string[]; rows: number }> {
    const today = utcDay(now);
    const last = new Date(today.getTime() + PARTITIONS_AHEAD_DAYS * DAY_MS);
    await this.deliveries.makePartitions(today, last);
    await this.events.makePartitions(today, last);
    const before = new Date(now.getTime() - this.config.webhook.retentionMs);
    const deliveries = await this.deliveries.prune(before, PRUNE_BATCH);
    const events = await this.events.prune(before, PRUNE_BATCH);
    return { partitions: [...deliveries.partitions, ...events.partitions], rows: deliveries.rows + events.rows };
  }

  onApplicationShutdown(): Promise<void> {
    return this.schedule.stop();
  }
}
