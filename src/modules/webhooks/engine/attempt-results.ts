import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { DomainEventInput, endpointOperational, webhookExhausted } from '../../domain-events/domain-event.catalogue';
import { DomainEventPublisher } from '../../domain-events/domain-event.publisher';
import { AttemptResult, DeliveryClaimRepository } from '../delivery-claim.repository';
import { EndpointHealthTally } from './endpoint-health';
import { MicroBatch } from './micro-batch';
import { WebhookJobs } from './webhook-jobs';
import { Periodic } from '../../../common/scheduling/periodic';

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
  /** Endpoint health is written once a second per worker, not by every result batch. */
  private readonly healthWrites: Periodic;

  constructor(
    private readonly em: EntityManager,
    private readonly deliveries: DeliveryClaimRepository,
    private readonly jobs: WebhookJobs,
    private readonly events: DomainEventPublisher,
  ) {
    this.results = new MicroBatch((rows) => this.write(rows), RESULT_BATCH);
    this.healthWrites = new Periodic({
      intervalMs: HEALTH_FLUSH_MS,
      run: () => this.flushHealth(),
      logger: this.logger,
      failure: 'could not record endpoint health',
    });
    this.healthWrites.start();
  }

  /** Records one attempt's result; false when the webhook changed meanwhile and the result set nothing. */
  record(result: AttemptResult): Promise<boolean> {
    return this.results.add(result);
  }

  private async write(rows: AttemptResult[]): Promise<boolean[]> {
    const applied = rows.some((row) => row.exhausts) ? await this.writeExhausting(rows) : await this.deliveries.recordResults(rows);
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

  /**
   * Results of which some end their webhook failed: written in one transaction with the
   * `operational` `exhausted` event of each that the write applied, so neither exists without the other.
   */
  private writeExhausting(rows: AttemptResult[]): Promise<Set<string>> {
    return this.em.fork().transactional(async (em) => {
      const applied = await this.deliveries.recordResults(rows, em);
      await this.publishByOrganization(
        em,
        rows
          .filter((row) => row.exhausts && applied.has(row.id))
          .map((row) => ({
            organizationId: row.organizationId,
            event: webhookExhausted(row.id, row.endpointId),
          })),
      );
      return applied;
    });
  }

  /**
   * Writes the endpoints' health gathered since the last write, with the `operational` `failing` and
   * `recovered` events of the endpoints whose run crossed the mark, in one transaction. A failed
   * write only delays auto-disable and those events (the tally is lost, the run restarts).
   */
  private async flushHealth(): Promise<void> {
    const changes = this.health.take();
    if (changes.length === 0) return;
    await this.em.fork().transactional(async (em) => {
      const transitions = await this.deliveries.recordHealth(changes, em);
      await this.publishByOrganization(
        em,
        transitions.map((t) => ({ organizationId: t.organizationId, event: endpointOperational(t.endpointId, t.action) })),
      );
    });
  }

  private async publishByOrganization(em: EntityManager, events: { organizationId: string; event: DomainEventInput }[]): Promise<void> {
    const byOrganization = new Map<string, DomainEventInput[]>();
    for (const { organizationId, event } of events) {
      const list = byOrganization.get(organizationId);
      if (list) list.push(event);
      else byOrganization.set(organizationId, [event]);
    }
    for (const [organizationId, list] of byOrganization) await this.events.publishMany(em, organizationId, list);
  }

  async onModuleDestroy(): Promise<void> {
    this.results.flush();
    await this.healthWrites.stop();
    await this.flushHealth().catch((error: unknown) => this.logger.warn({ err: error }, 'could not record endpoint health'));
  }
}
