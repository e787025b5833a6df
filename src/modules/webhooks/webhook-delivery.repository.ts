import { EntityRepository } from '@mikro-orm/postgresql';
import { execute, outsideTransaction, queryRows } from '../../database/raw-sql';
import { dropExpiredPartitions, makeDayPartitions } from '../../database/time-partitions';
import type { Knex } from 'knex';
import type { HealthChange } from './engine/endpoint-health';
import { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookAttempt } from './webhook-attempt.entity';

/** The webhooks module's day-partitioned tables, parents before children. */
const HISTORY_TABLES = ['webhook_delivery', 'webhook_attempt'] as const;

/** What the worker reads of a webhook before an attempt (timestamps as the driver returns them). */
export interface DeliveryState {
  id: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  status: DeliveryStatus;
  payload: string;
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
  status: DeliveryStatus;
  /** Set for a webhook ordered per resource: its end frees the next one (not written). */
  sequence: number | null;
  nextAttemptAt: Date | null;
  succeededAt: Date | null;
}

/**
 * An attempt's row is written once, with its result. Until then the webhook row alone says an
 * attempt is under way (attempt_count ahead of the attempts recorded, last_attempt_at its start,
 * next_attempt_at the end of its lease), and the log shows it from there: in flight while the lease
 * runs, then as interrupted. The next claim of the webhook writes the interrupted attempt's row,
 * which a late result still overwrites.
 */
/**
 * Whether a numbered webhook `w` still has a pending predecessor (a lower number of its endpoint
 * and resource), answered from the partial index of pending numbered webhooks. That predecessor
 * may be in an older day's partition.
 */
const PENDING_PREDECESSOR = `exists (
  select 1 from webhook_delivery p
   where p.endpoint_id = w.endpoint_id and p.resource_id = w.resource_id and p.status = 'pending'
     and p.sequence is not null and p.sequence < w.sequence)`;

export const INTERRUPTED = 'the worker stopped before the attempt completed';
export const IN_FLIGHT = 'in flight: no answer recorded yet';

/** An attempt as the delivery log shows it: recorded, or inferred from the webhook row while in flight. */
export type LoggedAttempt = Pick<WebhookAttempt, 'attempt' | 'startedAt' | 'durationMs' | 'responseStatus' | 'responseBody' | 'error'>;

/** The delivery log's filters (all optional; the time window on created_at, since inclusive). */
export interface DeliveryLogQuery {
  status?: DeliveryStatus;
  endpointId?: string;
  webhookTypes?: readonly string[];
  since?: Date;
  until?: Date;
}

/** What a replay selects by: a creation-time window (since inclusive) and finished statuses. */
export interface ReplayFilter {
  since: Date;
  until: Date;
  statuses: readonly DeliveryStatus[];
  endpointId?: string;
  webhookTypes?: readonly string[];
}

/** The tests the delivery log and a replay choose an organization's webhooks by; each filter is optional. */
function webhookConditions(
  organizationId: string,
  filter: DeliveryLogQuery & { statuses?: readonly DeliveryStatus[]; before?: string | null },
): { where: string; bindings: unknown[] } {
  const tests: [string, unknown][] = [['organization_id = ?', organizationId]];
  if (filter.status) tests.push(['status = ?', filter.status]);
  if (filter.statuses) tests.push(['status = any(?::text[])', [...filter.statuses]]);
  if (filter.endpointId) tests.push(['endpoint_id = ?', filter.endpointId]);
  if (filter.webhookTypes?.length) tests.push(['webhook_type = any(?::text[])', [...filter.webhookTypes]]);
  if (filter.since) tests.push(['created_at >= ?', filter.since]);
  if (filter.until) tests.push(['created_at < ?', filter.until]);
  if (filter.before) tests.push(['id < ?', filter.before]);
  return { where: tests.map(([test]) => test).join(' and '), bindings: tests.map(([, value]) => value) };
}

/**
 * The statement behind a page of the delivery log (GET …/webhooks), exported so that
 * bench/webhook-log-reads.ts and the tests explain exactly what the service runs.
 *
 * The page's ids are chosen first, newest first from `before` (exclusive), from an index alone:
 * (organization, id), or (organization, status|endpoint|type, id) for that filter, each carrying
 * every other column the log filters on (migration IndexOnlyReads). Whatever the filters, choosing
 * is then an index-only scan of each day's partition backwards, merged, that stops at the page's
 * size and reads no row. Only then are the page's rows read, by primary key: a row carries its
 * payload, and testing rows against the filters read the row of every webhook skipped.
 */
export function deliveryPageSql(
  organizationId: string,
  filter: DeliveryLogQuery,
  before: string | null,
  limit: number,
): { sql: string; bindings: unknown[] } {
  const { where, bindings } = webhookConditions(organizationId, { ...filter, before });
  const sql = `select w.* from (
    select id from webhook_delivery where ${where} order by id desc limit ?
  ) p join webhook_delivery w on w.id = p.id
  order by w.id desc`;
  return { sql, bindings: [...bindings, limit] };
}

/**
 * The statement behind a replay's selection (POST …/webhooks/replay), exported like
 * deliveryPageSql. The window is on created_at, as the API states it: a webhook's id carries its
 * event's time, earlier than the webhook's creation by however long the event waited to be judged,
 * so an id range would not select the same webhooks. Every column it tests, and the id it returns,
 * are in webhook_delivery_stats_index (organization, created_at) and in the status index
 * (organization, status, id): each day's partition is an index-only scan of the window, or of its
 * failed webhooks, whichever is smaller; the ids are then sorted newest first.
 */
export function replayableSql(organizationId: string, filter: ReplayFilter, limit: number): { sql: string; bindings: unknown[] } {
  const { where, bindings } = webhookConditions(organizationId, filter);
  return {
    sql: `select id from webhook_delivery where ${where} order by id desc limit ?`,
    bindings: [...bindings, limit],
  };
}

/**
 * "Still pending", for the statements that pick webhooks by id. Written so that it does not match
 * the partial indexes on pending webhooks (`where status = 'pending'`): their row estimate comes
 * from the last ANALYZE, often taken when nothing was pending, and with the plain test the
 * planner read every pending webhook through the due index and hash-joined them with the ids.
 * During a burst that is the whole backlog on every statement (24.5 ms instead of 2.7 ms for a
 * batch of 100 results with 30,000 pending). With the ids alone, each webhook is one primary-key
 * probe.
 */
const pending = (alias: string) => `coalesce(${alias}.status, '') = 'pending'`;

export class WebhookDeliveryRepository extends EntityRepository<WebhookDelivery> {
  private get knex(): Knex {
    return outsideTransaction(this.getEntityManager());
  }

  /**
   * A page of the delivery log: newest first, keyset on the time-ordered id (see deliveryPageSql).
   * One statement, so the page and the rows it shows are read at one moment.
   */
  async page(organizationId: string, filter: DeliveryLogQuery, before: string | null, limit: number): Promise<WebhookDelivery[]> {
    const em = this.getEntityManager();
    const { sql, bindings } = deliveryPageSql(organizationId, filter, before, limit);
    const rows = await queryRows<Record<string, unknown>>(em, sql, bindings);
    return rows.map((row) => em.map(WebhookDelivery, row));
  }

  findInOrganization(organizationId: string, id: string) {
    return this.findOne({ organizationId, id });
  }

  /** The webhook's attempts, oldest first, including the one under way (see INTERRUPTED). */
  async attempts(delivery: WebhookDelivery, now = new Date()): Promise<LoggedAttempt[]> {
    const recorded: LoggedAttempt[] = await this.getEntityManager().find(
      WebhookAttempt,
      { deliveryId: delivery.id },
      { orderBy: { attempt: 'asc' } },
    );
    const last = recorded.at(-1)?.attempt ?? 0;
    if (delivery.attemptCount > last && delivery.lastAttemptAt) {
      const leaseRuns =
        delivery.status === 'pending' && delivery.nextAttemptAt !== null && delivery.nextAttemptAt.getTime() > now.getTime();
      recorded.push({
        attempt: delivery.attemptCount,
        startedAt: delivery.lastAttemptAt,
        durationMs: 0,
        responseStatus: null,
        responseBody: null,
        error: leaseRuns ? IN_FLIGHT : INTERRUPTED,
      });
    }
    return recorded;
  }

  /** The webhooks among `ids` that exist, in one statement. */
  async states(ids: readonly string[]): Promise<Map<string, DeliveryState>> {
    const out = new Map<string, DeliveryState>();
    if (ids.length === 0) return out;
    const rows = await queryRows<StateRow>(
      this.knex,
      `select id, organization_id, endpoint_id, event_id, status, payload, resource_type, attempt_count, cycle_start_attempt,
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
  async recordResults(rows: readonly AttemptResult[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const recorded = await queryRows<{ id: string }>(
      this.knex,
      `with u as (
         select * from unnest(?::uuid[], ?::int[], ?::int[], ?::timestamptz[], ?::int[], ?::int[], ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::text[])
           as u(id, attempt, cycle_start_attempt, started_at, duration_ms, response_status, error, status, next_attempt_at, succeeded_at, response_body)
       ), a as (
         insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error, response_body)
         select id, attempt, started_at, duration_ms, response_status, error, response_body from u
         on conflict (delivery_id, attempt) do update
           set duration_ms = excluded.duration_ms, response_status = excluded.response_status, error = excluded.error,
               response_body = excluded.response_body
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
      ] as never[],
    );
    return new Set(recorded.map((r) => r.id));
  }

  /**
   * Writes what workers learned of endpoints' runs of failures (see EndpointHealthTally): a
   * success restarts the run with what failed after it; failures alone extend the current run
   * (its start kept) and add to its count. Rows are taken in the given (id) order.
   */
  async recordHealth(changes: readonly HealthChange[]): Promise<void> {
    if (changes.length === 0) return;
    await execute(
      this.knex,
      `insert into webhook_endpoint_health as h (endpoint_id, organization_id, last_success_at, failing_since, failed_webhooks)
       select * from unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::timestamptz[], ?::int[])
       on conflict (endpoint_id) do update set
         failing_since = case when excluded.last_success_at is not null then excluded.failing_since
                              else coalesce(h.failing_since, excluded.failing_since) end,
         failed_webhooks = case when excluded.last_success_at is not null then excluded.failed_webhooks
                                else h.failed_webhooks + excluded.failed_webhooks end,
         last_success_at = coalesce(excluded.last_success_at, h.last_success_at)`,
      [
        changes.map((c) => c.endpointId),
        changes.map((c) => c.organizationId),
        changes.map((c) => c.succeededAt),
        changes.map((c) => c.firstFailureAt),
        changes.map((c) => c.failedWebhooks),
      ] as never[],
    );
  }

  /**
   * The finished webhooks a replay selects, newest first, at most `limit` (callers ask for one
   * more than they allow, to tell a selection that is too large): see replayableSql.
   */
  async replayable(organizationId: string, filter: ReplayFilter, limit: number): Promise<string[]> {
    const { sql, bindings } = replayableSql(organizationId, filter, limit);
    const rows = await queryRows<{ id: string }>(this.knex, sql, bindings);
    return rows.map((r) => r.id);
  }

  /**
   * Starts a fresh retry cycle, due now, for each of `ids` that is finished (a pending one is
   * already on its way, unless `evenIfPending`: a redelivery restarts its schedule too), on this
   * repository's EntityManager (and so its transaction): the one way a replay or a redelivery
   * sends a webhook again. Returns the ids restarted.
   */
  async restartCycles(
    organizationId: string,
    ids: readonly string[],
    now: Date,
    options: { evenIfPending?: boolean } = {},
  ): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await queryRows<{ id: string }>(
      this.getEntityManager(),
      `update webhook_delivery set status = 'pending', cycle_start_attempt = attempt_count, next_attempt_at = ?
        where organization_id = ? and id = any(?::uuid[]) and (? or status <> 'pending')
        returning id`,
      [now, organizationId, [...ids], options.evenIfPending === true],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Endpoints whose current run of failures has lasted at least `forMs` and counts at least
   * `minFailedWebhooks` webhooks (auto-disable candidates), served by a partial index.
   */
  async failingEndpoints(
    forMs: number,
    minFailedWebhooks: number,
  ): Promise<{ organizationId: string; endpointId: string; failingSince: Date }[]> {
    // The database's clock, the one that wrote failing_since.
    const rows = await queryRows<{ organization_id: string; endpoint_id: string; failing_since: Date }>(
      this.knex,
      `select organization_id, endpoint_id, failing_since from webhook_endpoint_health
        where failing_since <= now() - ? * interval '1 millisecond' and failed_webhooks >= ?
        order by failing_since limit 1000`,
      [forMs, minFailedWebhooks],
    );
    return rows.map((r) => ({
      organizationId: r.organization_id,
      endpointId: r.endpoint_id,
      failingSince: new Date(r.failing_since),
    }));
  }

  /**
   * Pending webhooks whose next attempt is overdue (before `cutoff`, or after `skewedAfter`: a
   * time written by a clock that ran ahead), oldest first but at most `perOrganization` from each
   * organization, so one organization's backlog cannot starve the others' recovery.
   */
  async overdue(
    cutoff: Date,
    skewedAfter: Date,
    limit: number,
    perOrganization: number,
  ): Promise<{ id: string; organizationId: string }[]> {
    const rows = await queryRows<{ id: string; organization_id: string }>(
      this.knex,
      `select id, organization_id from (
         select id, organization_id, next_attempt_at,
                row_number() over (partition by organization_id order by next_attempt_at) as n
           from webhook_delivery w
          where status = 'pending' and (next_attempt_at < ? or next_attempt_at > ?)
            and (w.sequence is null or not ${PENDING_PREDECESSOR})
       ) s where n <= ? order by n, next_attempt_at limit ?`,
      [cutoff, skewedAfter, perOrganization, limit],
    );
    return rows.map((r) => ({ id: r.id, organizationId: r.organization_id }));
  }

  /** Makes the day partitions of webhooks and their attempts from `first` to `last` (UTC days). */
  async makePartitions(first: Date, last: Date): Promise<void> {
    for (const table of HISTORY_TABLES) await makeDayPartitions(this.knex, table, first, last);
  }

  /**
   * Retention: every webhook and attempt made before `before` goes. Whole days are dropped as
   * partitions (attempts first); the few rows outside the day partitions (ids that are not
   * UUIDv7, or of a day never made) are deleted, finished ones only, `batch` per statement.
   * Returns the partitions dropped and the rows deleted.
   */
  async prune(before: Date, batch: number, onDrop?: (name: string, ms: number) => void): Promise<{ partitions: string[]; rows: number }> {
    const partitions: string[] = [];
    for (const table of [...HISTORY_TABLES].reverse()) partitions.push(...(await dropExpiredPartitions(this.knex, table, before, onDrop)));
    let rows = 0;
    for (;;) {
      const [deleted] = await queryRows<{ n: number }>(
        this.knex,
        `with d as (
           delete from webhook_delivery_default where id in (
             select id from webhook_delivery_default where created_at < ? and status in ('succeeded', 'failed') order by created_at limit ?)
           returning id
         ), a as (delete from webhook_attempt_default where delivery_id in (select id from d))
         select count(*)::int as n from d`,
        [before, batch],
      );
      rows += deleted.n;
      if (deleted.n < batch) return { partitions, rows };
    }
  }
}
