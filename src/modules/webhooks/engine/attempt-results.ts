import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AttemptResult, DeliveryClaimRepository } from '../delivery-claim.repository';
import { EndpointHealthTally } from './endpoint-health';
import { MicroBatch } from './micro-batch';
import { WebhookJobs } from './webhook-jobs';

/**
 * Results wait longer than jobs, and at most two of their batches write at a time (the next
 * gathers meanwhile, as a group commit does): the receiver already has the webhook and the slot is
 * already free, so the wait delays nothing anyone sees, while batches stay full when several
 * workers split the stream or the database is slow. Each statement has a fixed cost (planning over
 * the day partitions, a round trip); with a 15 ms wait, a second worker's half-full result batches
 * made it pay that cost twice as often.
 */
const RESULT_BATCH = { maxItems: 500, maxWaitMs: 30, maxInFlight: 2 };
/** How often a worker writes down what it learned of endpoints' runs of failures (auto-disable). */
const HEALTH_FLUSH_MS = 1000;

/**
 * Where attempts' results go: written together every few milliseconds, each only if its attempt
 * is still the webhook's current one. What they say of endpoints' health is written once a
 * second (auto-disable), and the end of an ordered webhook wakes the next one of its resource.
 */
@Injectable()
export class AttemptResults implements OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly results: MicroBatch<AttemptResult, boolean>;
  private readonly health = new EndpointHealthTally();
  private readonly healthTimer: NodeJS.Timeout;

  constructor(
    private readonly deliveries: DeliveryClaimRepository,
    private readonly jobs: WebhookJobs,
  ) {
    this.results = new MicroBatch((rows) => this.write(rows), RESULT_BATCH);
    this.healthTimer = setInterval(() => void this.flushHealth(), HEALTH_FLUSH_MS);
    this.healthTimer.unref();
  }

  /** Records one attempt's result; false when the webhook changed meanwhile and the result set nothing. */
  record(result: AttemptResult): Promise<boolean> {
    return this.results.add(result);
  }

  private async write(rows: AttemptResult[]): Promise<boolean[]> {
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
    clearInterval(this.healthTimer);
    await this.flushHealth();
  }
}
