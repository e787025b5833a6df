import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { formatDbTimestamp } from '../../common/time';
import { formatStatsInstant, StatsWindow } from './webhook-stats.rules';

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
 * a fill step, and each percentile sorts one bucket's latencies rather than the whole window's.
 * A GROUP BY over the window would instead sort every row by bucket before aggregating, since
 * ordered-set aggregates cannot be hashed.
 *
 * Latency is succeeded_at − created_at in milliseconds, clamped at 0 because created_at and
 * succeeded_at may be written by two workers whose clocks differ slightly.
 */
export function webhookStatsSql(query: StatsQuery): { sql: string; bindings: (string | number)[] } {
  const { window } = query;
  const width = `${window.bucketMs / 1000} seconds`;
  const lastBucket = window.firstBucket + BigInt(window.bucketCount - 1) * BigInt(window.bucketMs) * 1000n;
  const latency = `greatest(extract(epoch from d.succeeded_at - d.created_at) * 1000, 0)::float8`;
  const sql = `select b.start as start_utc, s.succeeded, s.failed, s.retried, s.p50_ms, s.p99_ms
  from generate_series(?::timestamptz, ?::timestamptz, ?::interval) as b(start)
  cross join lateral (
    select count(*) filter (where d.status = 'succeeded')::int as succeeded,
           count(*) filter (where d.status = 'failed')::int as failed,
           count(*) filter (where d.attempt_count > 1)::int as retried,
           round(percentile_cont(0.5) within group (order by ${latency}) filter (where d.status = 'succeeded')) as p50_ms,
           round(percentile_cont(0.99) within group (order by ${latency}) filter (where d.status = 'succeeded')) as p99_ms
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

/** Delivery statistics of an organization's webhooks, read from the webhooks module's own table. */
@Injectable()
export class WebhookStatsReader {
  constructor(private readonly em: EntityManager) {}

  async buckets(query: StatsQuery): Promise<StatsBucketRow[]> {
    const { sql, bindings } = webhookStatsSql(query);
    const result = await this.em.getKnex().raw(sql, bindings);
    return (result.rows as Record<string, unknown>[]).map((r) => ({
      startUtc: formatDbTimestamp(r.start_utc as string | Date),
      succeeded: Number(r.succeeded),
      failed: Number(r.failed),
      retried: Number(r.retried),
      p50Ms: r.p50_ms === null ? null : Number(r.p50_ms),
      p99Ms: r.p99_ms === null ? null : Number(r.p99_ms),
    }));
  }
}
