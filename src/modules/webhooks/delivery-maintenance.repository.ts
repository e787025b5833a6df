import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from 'knex';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { dropExpiredPartitions, makeDayPartitions } from '../../database/time-partitions';
import { PENDING_PREDECESSOR } from './delivery-sql';

/** The webhooks module's day-partitioned tables, parents before children. */
const HISTORY_TABLES = ['webhook_delivery', 'webhook_attempt'] as const;

/**
 * The reconciler's statements on the delivery tables: overdue webhooks to recover, endpoints to
 * disable, and the day partitions of the history, made ahead and dropped past the retention.
 */
@Injectable()
export class DeliveryMaintenanceRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return outsideTransaction(this.em);
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
