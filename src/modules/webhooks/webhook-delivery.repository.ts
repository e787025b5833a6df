import { EntityRepository } from '@mikro-orm/postgresql';
import type { Knex } from 'knex';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookAttempt } from './webhook-attempt.entity';

/**
 * An attempt's row is written once, with its result. Until then the webhook row alone says an
 * attempt is under way (attempt_count ahead of the attempts recorded, last_attempt_at its start,
 * next_attempt_at the end of its lease), and the log shows it from there: in flight while the lease
 * runs, then as interrupted. The next claim of the webhook writes the interrupted attempt's row,
 * which a late result still overwrites.
 */
export const INTERRUPTED = 'the worker stopped before the attempt completed';
export const IN_FLIGHT = 'in flight: no answer recorded yet';

/** An attempt as the delivery log shows it: recorded, or inferred from the webhook row while in flight. */
export type LoggedAttempt = Pick<
  WebhookAttempt,
  'attempt' | 'startedAt' | 'durationMs' | 'responseStatus' | 'responseBody' | 'error' | 'inFlightLimit'
>;

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
 * The delivery log and what the API changes in it: pages of the log, a webhook with its attempts,
 * the selection of a replay and the restart of retry cycles. The engine's statements (claims,
 * results) are DeliveryClaimRepository's; the history's upkeep is DeliveryMaintenanceRepository's.
 */
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
        inFlightLimit: null,
      });
    }
    return recorded;
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
}
