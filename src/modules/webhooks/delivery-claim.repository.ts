import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from 'knex';
import { execute, outsideTransaction, queryRows, SqlTarget } from '../../database/raw-sql';
import { PENDING_PREDECESSOR, pending } from './delivery-sql';
import type { HealthChange } from './engine/endpoint-health';
import type { DeliveryStatus } from './webhook-delivery.entity';
import { INTERRUPTED } from './webhook-delivery.repository';

/** What the worker reads of a webhook before an attempt (timestamps as the driver returns them). */
export interface DeliveryState {
  id: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  status: DeliveryStatus;
  payload: string;
  webhookType: string;
  resourceType: string;
  attemptCount: number;
  cycleStartAttempt: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  eventCreatedAt: string;
  /** The W3C traceparent of the request that wrote the event; null when it was not traced. */
  traceparent: string | null;
  /** Its place among the webhooks of its resource to an ordered endpoint; null when unordered. */
  sequence: number | null;
}

interface StateRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  status: DeliveryStatus;
  payload: string;
  webhook_type: string;
  resource_type: string;
  attempt_count: number;
  cycle_start_attempt: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  event_created_at: string;
  traceparent: string | null;
  sequence: string | null;
}

/** A webhook judged from its event, created claimed (attempt 1 in flight) or waiting for a slot. */
export interface NewDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  organizationId: string;
  webhookType: string;
  resourceType: string;
  resourceId: string;
  action: string;
  payload: string;
  eventCreatedAt: string;
  traceparent: string | null;
  claimed: boolean;
  /** To an endpoint ordered per resource: numbered at creation, never claimed then. */
  ordered: boolean;
}

/** The outcome of one attempt, and where the webhook stands after it. */
export interface AttemptResult {
  id: string;
  organizationId: string;
  endpointId: string;
  attempt: number;
  cycleStartAttempt: number;
  /** When the attempt was claimed (the webhook's last_attempt_at while it is in flight). */
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  /** The start of the receiver's answer; null when none came. */
  responseBody: string | null;
  error: string | null;
  /** The endpoint's adaptive in-flight limit when the attempt started; null when it made no request. */
  inFlightLimit: number | null;
  status: DeliveryStatus;
  /** Set for a webhook ordered per resource: its end frees the next one (not written). */
  sequence: number | null;
  nextAttemptAt: Date | null;
  succeededAt: Date | null;
  /** Ends the webhook failed in a way the organization hears of (`operational` `exhausted`): not written. */
  exhausts: boolean;
}

/** An endpoint whose run of consecutive failed attempts just crossed the `failing` mark, or ended after it. */
export interface HealthTransition {
  endpointId: string;
  organizationId: string;
  action: 'failing' | 'recovered';
}

/** Consecutive failed attempts (over all its webhooks) that make an endpoint `failing`. */
export const FAILING_AFTER_ATTEMPTS = 5;

/**
 * The engine's statements on the delivery tables, each for a whole batch: what a batch reads of
 * its webhooks, the webhooks judged from events, claims of attempts and their give-back, results,
 * the next ordered webhook, and what attempts say of endpoints' health.
 */
@Injectable()
export class DeliveryClaimRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return outsideTransaction(this.em);
  }

  /** The webhooks among `ids` that exist, in one statement. */
  async states(ids: readonly string[]): Promise<Map<string, DeliveryState>> {
    const out = new Map<string, DeliveryState>();
    if (ids.length === 0) return out;
    const rows = await queryRows<StateRow>(
      this.knex,
      `select id, organization_id, endpoint_id, event_id, status, payload, webhook_type, resource_type, attempt_count, cycle_start_attempt,
              last_attempt_at, next_attempt_at, event_created_at, traceparent, sequence
         from webhook_delivery where id = any(?::uuid[])`,
      [[...ids]],
    );
    for (const r of rows) {
      out.set(r.id, {
        id: r.id,
        organizationId: r.organization_id,
        endpointId: r.endpoint_id,
        eventId: r.event_id,
        status: r.status,
        payload: r.payload,
        webhookType: r.webhook_type,
        resourceType: r.resource_type,
        attemptCount: r.attempt_count,
        cycleStartAttempt: r.cycle_start_attempt,
        lastAttemptAt: r.last_attempt_at,
        nextAttemptAt: r.next_attempt_at,
        eventCreatedAt: r.event_created_at,
        traceparent: r.traceparent,
        sequence: r.sequence === null ? null : Number(r.sequence),
      });
    }
    return out;
  }

  /**
   * Creates the webhooks judged from their events, in the caller's transaction (the one that
   * marks the events judged). A claimed one starts with attempt 1 under way until its lease ends,
   * exactly as a separate claim would leave it; the others are due at once. A webhook to an
   * endpoint ordered per resource takes the next numbers of its endpoint and resource from
   * `webhook_sequence` (several of one resource in event order: time, then event id); the counter
   * rows are locked in key order and held until commit, so numbers are never given twice or skipped.
   */
  async createJudged(trx: Knex.Transaction, rows: readonly NewDelivery[], now: Date, leaseUntil: Date): Promise<void> {
    if (rows.length === 0) return;
    await execute(
      trx,
      `with u as (
         select u.*,
                row_number() over (partition by endpoint_id, resource_id order by event_created_at, event_id) as k,
                count(*) over (partition by endpoint_id, resource_id) as n
           from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::uuid[], ?::text[], ?::text[], ?::timestamptz[], ?::boolean[], ?::text[], ?::boolean[])
             as u(id, event_id, endpoint_id, organization_id, webhook_type, resource_type, resource_id, action, payload, event_created_at, claimed, traceparent, ordered)
       ), c as (
         insert into webhook_sequence as s (endpoint_id, resource_id, last_sequence)
         select endpoint_id, resource_id, count(*) from u where ordered group by endpoint_id, resource_id order by endpoint_id, resource_id
         on conflict (endpoint_id, resource_id) do update set last_sequence = s.last_sequence + excluded.last_sequence
         returning endpoint_id, resource_id, last_sequence
       )
       insert into webhook_delivery (id, event_id, endpoint_id, created_at, organization_id, webhook_type, resource_type, resource_id, action,
         payload, event_created_at, traceparent, status, attempt_count, cycle_start_attempt, last_attempt_at, next_attempt_at, sequence)
       select u.id, u.event_id, u.endpoint_id, ?, u.organization_id, u.webhook_type, u.resource_type, u.resource_id, u.action, u.payload,
              u.event_created_at, u.traceparent, 'pending',
              case when u.claimed then 1 else 0 end, 0,
              case when u.claimed then ?::timestamptz end,
              case when u.claimed then ?::timestamptz else ?::timestamptz end,
              case when u.ordered then c.last_sequence - u.n + u.k end
         from u left join c on u.ordered and c.endpoint_id = u.endpoint_id and c.resource_id = u.resource_id`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.eventId),
        rows.map((r) => r.endpointId),
        rows.map((r) => r.organizationId),
        rows.map((r) => r.webhookType),
        rows.map((r) => r.resourceType),
        rows.map((r) => r.resourceId),
        rows.map((r) => r.action),
        rows.map((r) => r.payload),
        rows.map((r) => r.eventCreatedAt),
        rows.map((r) => r.claimed),
        rows.map((r) => r.traceparent),
        rows.map((r) => r.ordered),
        now,
        now,
        leaseUntil,
        now,
      ],
    );
  }

  /**
   * Claims the next attempt of each webhook that nobody else claimed, finished or changed since it
   * was read (the attempt count read is the version: two workers can never claim the same
   * attempt), in one statement. The previous attempt, if its result was never written (its worker
   * stopped), gets its interrupted row here, started when the webhook row says it did. Returns
   * the attempt number and retry cycle start of each claimed. A numbered webhook (ordered per
   * resource) is claimed only once no webhook of its endpoint and resource with a lower number is
   * pending; the ones held back so are returned in `waiting`, unchanged (waiting is no attempt).
   */
  async claim(
    rows: readonly { id: string; expectedAttemptCount: number; previousStartedAt: string | Date | null; numbered: boolean }[],
    now: Date,
    leaseUntil: Date,
  ): Promise<{ claimed: Map<string, { attempt: number; cycleStartAttempt: number }>; waiting: Set<string> }> {
    const out = new Map<string, { attempt: number; cycleStartAttempt: number }>();
    const waiting = new Set<string>();
    if (rows.length === 0) return { claimed: out, waiting };
    const claimed = await queryRows<{ id: string; attempt_count: number; cycle_start_attempt: number; waiting: boolean }>(
      this.knex,
      `with b as (
         select w.id from webhook_delivery w join unnest(?::uuid[]) as u(id) on w.id = u.id
          where ${pending('w')} and w.sequence is not null and ${PENDING_PREDECESSOR}
       ), d as (
         update webhook_delivery w set attempt_count = w.attempt_count + 1, last_attempt_at = ?, next_attempt_at = ?
           from unnest(?::uuid[], ?::int[], ?::timestamptz[]) as u(id, expected, previous_started_at)
          where w.id = u.id and ${pending('w')} and w.attempt_count = u.expected and w.id not in (select id from b)
         returning w.id, w.attempt_count, w.cycle_start_attempt, u.previous_started_at
       ), a as (
         insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
         select id, attempt_count - 1, previous_started_at, 0, null, ? from d where attempt_count > 1 and previous_started_at is not null
         on conflict (delivery_id, attempt) do nothing
       )
       select id, attempt_count, cycle_start_attempt, false as waiting from d
       union all select id, 0, 0, true from b`,
      [
        // Only numbered webhooks can wait for a predecessor: the others cost no look.
        rows.filter((r) => r.numbered).map((r) => r.id),
        now,
        leaseUntil,
        rows.map((r) => r.id),
        rows.map((r) => r.expectedAttemptCount),
        rows.map((r) => r.previousStartedAt),
        INTERRUPTED,
      ] as never[],
    );
    for (const r of claimed) {
      if (r.waiting) waiting.add(r.id);
      else out.set(r.id, { attempt: r.attempt_count, cycleStartAttempt: r.cycle_start_attempt });
    }
    return { claimed: out, waiting };
  }

  /**
   * For numbered webhooks that just ended (succeeded or failed), the next pending webhook of the
   * same endpoint and resource, if any: the one now free to go.
   */
  async successors(finishedIds: readonly string[]): Promise<string[]> {
    if (finishedIds.length === 0) return [];
    const rows = await queryRows<{ id: string }>(
      this.knex,
      `select distinct n.id from webhook_delivery f
         cross join lateral (
           select p.id from webhook_delivery p
            where p.endpoint_id = f.endpoint_id and p.resource_id = f.resource_id and p.status = 'pending' and p.sequence is not null
            order by p.sequence limit 1
         ) n
        where f.id = any(?::uuid[]) and f.sequence is not null`,
      [[...finishedIds]],
    );
    return rows.map((r) => r.id);
  }

  /** Gives back an attempt claimed for a receiver that then had no free slot: no request was made. */
  async unclaim(id: string, attempt: number, lastAttemptAt: string | Date | null, nextAttemptAt: string | Date | null): Promise<void> {
    await execute(
      this.knex,
      `update webhook_delivery set attempt_count = attempt_count - 1, last_attempt_at = ?::timestamptz, next_attempt_at = ?::timestamptz
        where id = ? and attempt_count = ? and ${pending('webhook_delivery')}`,
      [lastAttemptAt, nextAttemptAt, id, attempt],
    );
  }

  /**
   * Records many attempts' results in one statement. Each attempt's own row is written with its
   * outcome (it did happen; it replaces an interrupted row a later claim wrote meanwhile); the
   * webhook's state changes only if that attempt is still its
   * current one (compare-and-set on the attempt count and the retry cycle): a redelivery or a
   * newer claim made while the request was in flight is never overwritten by the late result.
   * Returns the ids whose state was set.
   */
  async recordResults(rows: readonly AttemptResult[], target: SqlTarget = this.knex): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const recorded = await queryRows<{ id: string }>(
      target,
      `with u as (
         select * from unnest(?::uuid[], ?::int[], ?::int[], ?::timestamptz[], ?::int[], ?::int[], ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::text[], ?::int[])
           as u(id, attempt, cycle_start_attempt, started_at, duration_ms, response_status, error, status, next_attempt_at, succeeded_at, response_body,
                in_flight_limit)
       ), a as (
         insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error, response_body, in_flight_limit)
         select id, attempt, started_at, duration_ms, response_status, error, response_body, in_flight_limit from u
         on conflict (delivery_id, attempt) do update
           set duration_ms = excluded.duration_ms, response_status = excluded.response_status, error = excluded.error,
               response_body = excluded.response_body, in_flight_limit = excluded.in_flight_limit
       ), d as (
         update webhook_delivery w set status = u.status, next_attempt_at = u.next_attempt_at,
                last_response_status = u.response_status, succeeded_at = coalesce(u.succeeded_at, w.succeeded_at)
           from u
          where w.id = u.id and ${pending('w')} and w.attempt_count = u.attempt and w.cycle_start_attempt = u.cycle_start_attempt
         returning w.id
       )
       select id from d`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.attempt),
        rows.map((r) => r.cycleStartAttempt),
        rows.map((r) => r.startedAt),
        rows.map((r) => r.durationMs),
        rows.map((r) => r.responseStatus),
        rows.map((r) => r.error),
        rows.map((r) => r.status),
        rows.map((r) => r.nextAttemptAt),
        rows.map((r) => r.succeededAt),
        rows.map((r) => r.responseBody),
        rows.map((r) => r.inFlightLimit),
      ] as never[],
    );
    return new Set(recorded.map((r) => r.id));
  }

  /**
   * Writes what workers learned of endpoints' runs of failures (see EndpointHealthTally): a
   * success restarts the run with what failed after it; failures alone extend the current run
   * (its start kept) and add to its count. Rows are taken in the given (id) order.
   */
  async recordHealth(changes: readonly HealthChange[], target: SqlTarget = this.knex): Promise<HealthTransition[]> {
    if (changes.length === 0) return [];
    // The run after this write: restarted by a success seen, otherwise extended. Written twice
    // below because an update cannot read the value it sets in another column.
    const run = `case when excluded.last_success_at is not null then excluded.consecutive_failures
                      else h.consecutive_failures + excluded.consecutive_failures end`;
    const rows = await queryRows<{ endpoint_id: string; organization_id: string; failing: boolean; changed: boolean | null }>(
      target,
      `insert into webhook_endpoint_health as h
              (endpoint_id, organization_id, last_success_at, failing_since, failed_webhooks, consecutive_failures, failing, failing_changed_at)
       select u.*, u.consecutive_failures >= ${FAILING_AFTER_ATTEMPTS}, case when u.consecutive_failures >= ${FAILING_AFTER_ATTEMPTS} then now() end
         from unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::timestamptz[], ?::int[], ?::int[])
           as u(endpoint_id, organization_id, last_success_at, failing_since, failed_webhooks, consecutive_failures)
       on conflict (endpoint_id) do update set
         failing_since = case when excluded.last_success_at is not null then excluded.failing_since
                              else coalesce(h.failing_since, excluded.failing_since) end,
         failed_webhooks = case when excluded.last_success_at is not null then excluded.failed_webhooks
                                else h.failed_webhooks + excluded.failed_webhooks end,
         last_success_at = coalesce(excluded.last_success_at, h.last_success_at),
         consecutive_failures = ${run},
         -- Failing from the fifth failure in a row until a success; the time marks this write's change.
         failing = ${run} >= ${FAILING_AFTER_ATTEMPTS} or (h.failing and excluded.last_success_at is null),
         failing_changed_at = case when (${run} >= ${FAILING_AFTER_ATTEMPTS} or (h.failing and excluded.last_success_at is null)) <> h.failing
                                   then now() else h.failing_changed_at end
       returning endpoint_id, organization_id, failing, failing_changed_at = now() as changed`,
      [
        changes.map((c) => c.endpointId),
        changes.map((c) => c.organizationId),
        changes.map((c) => c.succeededAt),
        changes.map((c) => c.firstFailureAt),
        changes.map((c) => c.failedWebhooks),
        changes.map((c) => c.consecutiveFailures),
      ] as never[],
    );
    return rows
      .filter((row) => row.changed === true)
      .map((row) => ({
        endpointId: row.endpoint_id,
        organizationId: row.organization_id,
        action: row.failing ? ('failing' as const) : ('recovered' as const),
      }));
  }
}
