import { EntityRepository } from '@mikro-orm/postgresql';
import type { Knex } from 'knex';
import type { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookAttempt } from './webhook-attempt.entity';

/** What the worker reads of a webhook before an attempt (timestamps as the driver returns them). */
export interface DeliveryState {
  id: string;
  organizationId: string;
  status: DeliveryStatus;
  payload: string;
  resourceType: string;
  attemptCount: number;
  cycleStartAttempt: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  eventCreatedAt: string;
}

/** A webhook judged from its event, created claimed (attempt 1 in flight) or waiting for a slot. */
export interface NewDelivery {
  id: string;
  organizationId: string;
  webhookType: string;
  resourceType: string;
  resourceId: string;
  action: string;
  payload: string;
  eventCreatedAt: string;
  claimed: boolean;
}

/** The outcome of one attempt, and where the webhook stands after it. */
export interface AttemptResult {
  id: string;
  attempt: number;
  cycleStartAttempt: number;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  succeededAt: Date | null;
}

/**
 * Recorded on an attempt's row when it is claimed, so a worker that dies mid-request leaves an
 * honest log; the result overwrites it.
 */
export const INTERRUPTED = 'the worker stopped before the attempt completed';

export class WebhookDeliveryRepository extends EntityRepository<WebhookDelivery> {
  private get knex(): Knex {
    return this.getEntityManager().getKnex();
  }

  /** Newest first, keyset on the time-ordered id. */
  page(organizationId: string, status: DeliveryStatus | undefined, before: string | null, limit: number) {
    return this.find(
      { organizationId, ...(status ? { status } : {}), ...(before ? { id: { $lt: before } } : {}) },
      { orderBy: { id: 'desc' }, limit },
    );
  }

  findInOrganization(organizationId: string, id: string) {
    return this.findOne({ organizationId, id });
  }

  attempts(deliveryId: string) {
    return this.getEntityManager().find(WebhookAttempt, { deliveryId }, { orderBy: { attempt: 'asc' } });
  }

  /** The webhooks among `ids` that exist, in one statement. */
  async states(ids: readonly string[]): Promise<Map<string, DeliveryState>> {
    const out = new Map<string, DeliveryState>();
    if (ids.length === 0) return out;
    const result = await this.knex.raw(
      `select id, organization_id, status, payload, resource_type, attempt_count, cycle_start_attempt,
              last_attempt_at, next_attempt_at, event_created_at
         from webhook_delivery where id = any(?::uuid[])`,
      [[...ids]],
    );
    for (const r of result.rows) {
      out.set(r.id, {
        id: r.id,
        organizationId: r.organization_id,
        status: r.status,
        payload: r.payload,
        resourceType: r.resource_type,
        attemptCount: r.attempt_count,
        cycleStartAttempt: r.cycle_start_attempt,
        lastAttemptAt: r.last_attempt_at,
        nextAttemptAt: r.next_attempt_at,
        eventCreatedAt: r.event_created_at,
      });
    }
    return out;
  }

  /**
   * Creates the webhooks judged from their events, in the caller's transaction (the one that
   * marks the events judged). A claimed one starts with attempt 1 recorded as in flight until its
   * lease ends, exactly as a separate claim would leave it; the others are due at once.
   */
  async createJudged(trx: Knex, rows: readonly NewDelivery[], now: Date, leaseUntil: Date): Promise<void> {
    if (rows.length === 0) return;
    await trx.raw(
      `with u as (
         select * from unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::uuid[], ?::text[], ?::text[], ?::timestamptz[], ?::boolean[])
           as u(id, organization_id, webhook_type, resource_type, resource_id, action, payload, event_created_at, claimed)
       ), d as (
         insert into webhook_delivery (id, event_id, endpoint_id, created_at, organization_id, webhook_type, resource_type, resource_id, action,
           payload, event_created_at, status, attempt_count, cycle_start_attempt, last_attempt_at, next_attempt_at)
         select id, id, organization_id, ?, organization_id, webhook_type, resource_type, resource_id, action, payload, event_created_at, 'pending',
                case when claimed then 1 else 0 end, 0,
                case when claimed then ?::timestamptz end,
                case when claimed then ?::timestamptz else ?::timestamptz end
           from u
         returning id, attempt_count
       )
       insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
       select id, attempt_count, ?, 0, null, ? from d where attempt_count > 0`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.organizationId),
        rows.map((r) => r.webhookType),
        rows.map((r) => r.resourceType),
        rows.map((r) => r.resourceId),
        rows.map((r) => r.action),
        rows.map((r) => r.payload),
        rows.map((r) => r.eventCreatedAt),
        rows.map((r) => r.claimed),
        now,
        now,
        leaseUntil,
        now,
        now,
        INTERRUPTED,
      ],
    );
  }

  /**
   * Claims the next attempt of each webhook that nobody else claimed, finished or changed since it
   * was read (the attempt count read is the version: two workers can never claim the same
   * attempt), in one statement. Returns the attempt number and retry cycle start of each claimed.
   */
  async claim(
    rows: readonly { id: string; expectedAttemptCount: number }[],
    now: Date,
    leaseUntil: Date,
  ): Promise<Map<string, { attempt: number; cycleStartAttempt: number }>> {
    const out = new Map<string, { attempt: number; cycleStartAttempt: number }>();
    if (rows.length === 0) return out;
    const result = await this.knex.raw(
      `with d as (
         update webhook_delivery w set attempt_count = w.attempt_count + 1, last_attempt_at = ?, next_attempt_at = ?
           from unnest(?::uuid[], ?::int[]) as u(id, expected)
          where w.id = u.id and w.status = 'pending' and w.attempt_count = u.expected
         returning w.id, w.attempt_count, w.cycle_start_attempt
       ), a as (
         insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
         select id, attempt_count, ?, 0, null, ? from d
       )
       select id, attempt_count, cycle_start_attempt from d`,
      [now, leaseUntil, rows.map((r) => r.id), rows.map((r) => r.expectedAttemptCount), now, INTERRUPTED],
    );
    for (const r of result.rows) out.set(r.id, { attempt: r.attempt_count, cycleStartAttempt: r.cycle_start_attempt });
    return out;
  }

  /** Gives back an attempt claimed for a receiver that then had no free slot: no request was made. */
  async unclaim(id: string, attempt: number, lastAttemptAt: string | Date | null, nextAttemptAt: string | Date | null): Promise<void> {
    await this.knex.raw(
      `with d as (
         update webhook_delivery set attempt_count = attempt_count - 1, last_attempt_at = ?::timestamptz, next_attempt_at = ?::timestamptz
          where id = ? and attempt_count = ? and status = 'pending'
         returning id
       )
       delete from webhook_attempt where delivery_id in (select id from d) and attempt = ?`,
      [lastAttemptAt, nextAttemptAt, id, attempt, attempt],
    );
  }

  /**
   * Records many attempts' results in one statement. Each attempt's own row always gets its
   * outcome (it did happen); the webhook's state changes only if that attempt is still its
   * current one (compare-and-set on the attempt count and the retry cycle): a redelivery or a
   * newer claim made while the request was in flight is never overwritten by the late result.
   * Returns the ids whose state was set.
   */
  async recordResults(rows: readonly AttemptResult[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const result = await this.knex.raw(
      `with u as (
         select * from unnest(?::uuid[], ?::int[], ?::int[], ?::int[], ?::int[], ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[])
           as u(id, attempt, cycle_start_attempt, duration_ms, response_status, error, status, next_attempt_at, succeeded_at)
       ), a as (
         update webhook_attempt wa set duration_ms = u.duration_ms, response_status = u.response_status, error = u.error
           from u where wa.delivery_id = u.id and wa.attempt = u.attempt
       ), d as (
         update webhook_delivery w set status = u.status, next_attempt_at = u.next_attempt_at,
                last_response_status = u.response_status, succeeded_at = coalesce(u.succeeded_at, w.succeeded_at)
           from u
          where w.id = u.id and w.status = 'pending' and w.attempt_count = u.attempt and w.cycle_start_attempt = u.cycle_start_attempt
         returning w.id
       )
       select id from d`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.attempt),
        rows.map((r) => r.cycleStartAttempt),
        rows.map((r) => r.durationMs),
        rows.map((r) => r.responseStatus),
        rows.map((r) => r.error),
        rows.map((r) => r.status),
        rows.map((r) => r.nextAttemptAt),
        rows.map((r) => r.succeededAt),
      ] as never[],
    );
    return new Set((result.rows as { id: string }[]).map((r) => r.id));
  }

  /**
   * Pending webhooks whose next attempt is overdue (before `cutoff`, or after `skewedAfter`: a
   * time written by a clock that ran ahead), oldest first but at most `perOrganization` from each
   * organization, so one organization's backlog cannot starve the others' recovery.
   */
  async overdue(cutoff: Date, skewedAfter: Date, limit: number, perOrganization: number): Promise<{ id: string; organizationId: string }[]> {
    const result = await this.knex.raw(
      `select id, organization_id from (
         select id, organization_id, next_attempt_at,
                row_number() over (partition by organization_id order by next_attempt_at) as n
           from webhook_delivery
          where status = 'pending' and (next_attempt_at < ? or next_attempt_at > ?)
       ) s where n <= ? order by n, next_attempt_at limit ?`,
      [cutoff, skewedAfter, perOrganization, limit],
    );
    return (result.rows as { id: string; organization_id: string }[]).map((r) => ({ id: r.id, organizationId: r.organization_id }));
  }

  /**
   * Deletes finished webhooks (and, by cascade, their attempts) created before `before`, `batch`
   * rows per statement, each its own short transaction: a day of a busy deployment is never one
   * huge DELETE holding its locks and bloating one transaction. Returns the count.
   */
  async prune(before: Date, batch: number, onBatch?: (deleted: number, ms: number) => void): Promise<number> {
    let total = 0;
    for (;;) {
      const started = performance.now();
      const result = await this.knex.raw(
        `delete from webhook_delivery where id in (
           select id from webhook_delivery where created_at < ? and status in ('succeeded', 'failed') order by created_at limit ?)`,
        [before, batch],
      );
      const deleted = result.rowCount ?? 0;
      onBatch?.(deleted, performance.now() - started);
      total += deleted;
      if (deleted < batch) return total;
    }
  }
}
