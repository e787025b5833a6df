import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { formatDbTimestamp } from '../../../common/time';
import { formatStatsInstant, StatsWindow } from './webhook-stats.rules';
import { executeScript, knexTransaction, queryRows } from '../../../database/raw-sql';

/** One bucket of the delivery statistics. */
export interface StatsBucketRow {
  startUtc: string;
  succeeded: number;
  failed: number;
  retried: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface StatsQuery {
  organizationId: string;
  endpointId?: string;
  window: StatsWindow;
}

/**
 * The statement behind GET …/webhooks/stats, exported so that bench/webhook-stats.ts explains
 * exactly what the service runs.
 *
 * Every bucket is one row of `generate_series`, and each is aggregated by its own range scan of
 * webhook_delivery_stats_index (organization, created_at, covering the columns read): no row of
 * another organization or outside the window is read, an empty bucket is a row of zeros without
 * a fill step, and the percentiles sort one bucket's latencies at a time (both from one sort)
 * rather than the whole window's. A GROUP BY over the window would instead sort every row by
 * bucket first, since ordered-set aggregates cannot be hashed (BENCHMARKS.md compares the two).
 *
 * Latency is succeeded_at − created_at in milliseconds, clamped at 0 because created_at and
 * succeeded_at may be written by two workers whose clocks differ slightly; date_part keeps it in
 * double precision (extract would compute it in numeric, several times slower over a day of rows).
 */
export function webhookStatsSql(query: StatsQuery): { sql: string; bindings: (string | number)[] } {
  const { window } = query;
  const width = `${window.bucketMs / 1000} seconds`;
  const lastBucket = window.firstBucket + BigInt(window.bucketCount - 1) * BigInt(window.bucketMs) * 1000n;
  const sql = `select b.start as start_utc, s.succeeded, s.failed, s.retried, round(s.percentiles[1]) as p50_ms, round(s.percentiles[2]) as p99_ms
  from generate_series(?::timestamptz, ?::timestamptz, ?::interval) as b(start)
  cross join lateral (
    select count(*) filter (where d.status = 'succeeded')::int as succeeded,
           count(*) filter (where d.status = 'failed')::int as failed,
           count(*) filter (where d.attempt_count > 1)::int as retried,
           percentile_cont(array[0.5, 0.99]) within group (order by greatest(date_part('epoch', d.succeeded_at - d.created_at) * 1000, 0))
             filter (where d.status = 'succeeded') as percentiles
      from webhook_delivery d
     where d.organization_id = ?
       and d.created_at >= greatest(b.start, ?::timestamptz)
       and d.created_at < least(b.start + ?::interval, ?::timestamptz)${query.endpointId ? `\n       and d.endpoint_id = ?` : ''}
  ) s
 order by b.start`;
  const bindings: (string | number)[] = [
    formatStatsInstant(window.firstBucket),
    formatStatsInstant(lastBucket),
    width,
    query.organizationId,
    formatStatsInstant(window.since),
    width,
    formatStatsInstant(window.until),
  ];
  if (query.endpointId) bindings.push(query.endpointId);
  return { sql, bindings };
}

/**
 * Set for the statement's transaction only. The planner cannot know how many webhooks each
 * bucket's range holds and guesses thousands per scan, so for a busy organization the statement
 * costs far above jit_above_cost; JIT then compiled for 90 to 400 ms per call, which the
 * execution never won back (docs/BENCHMARKS-HISTORY.md, "Delivery statistics at scale").
 */
export const STATS_STATEMENT_SETTINGS = ['set local jit = off'];

/** Delivery statistics of an organization's webhooks, read from the webhooks module's own table. */
@Injectable()
export class WebhookStatsReader {
  constructor(private readonly em: EntityManager) {}

  async buckets(query: StatsQuery): Promise<StatsBucketRow[]> {
    const { sql, bindings } = webhookStatsSql(query);
    const rows = await knexTransaction(this.em, async (trx) => {
      for (const setting of STATS_STATEMENT_SETTINGS) await executeScript(trx, setting);
      return queryRows(trx, sql, bindings);
    });
    return rows.map((r) => ({
      startUtc: formatDbTimestamp(r.start_utc as string | Date),
      succeeded: Number(r.succeeded),
      failed: Number(r.failed),
      retried: Number(r.retried),
      p50Ms: r.p50_ms === null ? null : Number(r.p50_ms),
      p99Ms: r.p99_ms === null ? null : Number(r.p99_ms),
    }));
  }
}
