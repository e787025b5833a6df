// engine/outbox/: the webhook engine's side of the transactional outbox (relaying events, judging them).
import { Injectable } from '@nestjs/common';
import type { Knex } from 'knex';
import { DomainEventStore } from '../../../domain-events/domain-event.store';
import { DeliveryClaimRepository, NewDelivery } from '../../delivery-claim.repository';
import { deferredForOrder, PendingEvent } from '../delivery-plan';

/** An event and the webhooks it is judged into (none when no endpoint wants it). */
export interface EventJudgement {
  eventId: string;
  webhooks: readonly NewDelivery[];
}

/**
 * The engine's reads and writes of events, in the words of delivery: which events of a batch are
 * still to judge, which must wait for an older event of their resource, and judging them (the
 * events marked and their webhooks created in one transaction). The rows are domain-events', read
 * and written through its store; this is where the engine decides when.
 */
@Injectable()
export class OutboxEvents {
  constructor(
    private readonly events: DomainEventStore,
    private readonly deliveries: DeliveryClaimRepository,
  ) {}

  /** The events among `ids` that nobody has judged yet. */
  pending(ids: readonly string[]): Promise<Map<string, PendingEvent>> {
    return this.events.unjudged(ids);
  }

  /**
   * The events among `ordered` (webhooks numbered per resource) that must wait: an older event of
   * their resource is still unjudged (judged by another batch or worker, or not relayed yet), or
   * an earlier one of the same resource here waits.
   */
  async waitingForOlder(ordered: readonly PendingEvent[]): Promise<Set<string>> {
    if (ordered.length === 0) return new Set();
    return deferredForOrder(ordered, await this.events.olderUnjudged(ordered));
  }

  /**
   * Judges events in the caller's transaction: marks each one judged and creates its webhooks
   * (those claimed with attempt 1 under way until `leaseUntil`), so a webhook exists exactly when
   * its event is marked. An event someone else judged meanwhile gets no webhooks here. Returns
   * the ids this call judged. Test sends take this same path, so `processed_at` is written in one
   * place and a webhook row is created in one way only.
   */
  async judge(trx: Knex.Transaction, judgements: readonly EventJudgement[], now: Date, leaseUntil: Date): Promise<Set<string>> {
    if (judgements.length === 0) return new Set();
    const marked = await this.events.markProcessed(
      trx,
      judgements.map((j) => j.eventId),
      now,
    );
    const rows = judgements.filter((j) => marked.has(j.eventId)).flatMap((j) => j.webhooks);
    await this.deliveries.createJudged(trx, rows, now, leaseUntil);
    return marked;
  }
}
