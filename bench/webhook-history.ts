import type { Client } from 'pg';
import { dropDatabase } from '../test/support/database-admin';

/**
 * The delivery history the read benches measure on (bench/webhook-stats.ts, bench/webhook-log-reads.ts):
 * a day of one busy organization's webhooks among other organizations'.
 */

/**
 * One day of webhooks ending now, every organization's interleaved in creation order. The mix of
 * the measured organization: 94 % delivered at the first attempt (20 ms + an exponential tail,
 * mean 100 ms), 3 % after 2 to 4 attempts (the 5 s, 30 s, 2 m retry delays added), 1 % failed,
 * 2 % pending in their retry schedule; 30 % go to three extra endpoints; 60 % are of type
 * transaction, 30 % nft, 10 % kyc. The body is a realistic
 * 230 bytes, so reading the heap costs what it costs in production. Ids are UUIDv7 of the
 * creation time, so the rows sit in the day partitions of the history as in production.
 */
export async function fillWebhookHistory(
  db: Client,
  options: { organizationId: string; others: string[]; rows: number; otherRows: number; log: (message: string) => void },
): Promise<void> {
  const { organizationId, others, rows: ROWS, otherRows: OTHER_ROWS, log } = options;
  const started = Date.now();
  const total = ROWS + OTHER_ROWS;
  // Ids are UUIDv7 of their creation time, as the service makes them, so each row lands in its
  // day's partition; the window reaches into yesterday, whose partition the maintenance pass of a
  // running service would have made.
  await db.query(
    `select history_make_partitions('webhook_delivery', (now() at time zone 'UTC')::date - 1, (now() at time zone 'UTC')::date)`,
  );
  // Which rows belong to the measured organization: ROWS of every `total`, spread evenly.
  await db.query(
    `insert into webhook_delivery (id, created_at, organization_id, event_id, endpoint_id, webhook_type, resource_type, resource_id,
       action, payload, event_created_at, status, attempt_count, cycle_start_attempt, last_attempt_at, next_attempt_at,
       last_response_status, succeeded_at)
     select id, created_at, org, id, endpoint, webhook_type, 'Transaction', gen_random_uuid(), 'create',
            '{"organizationId":"' || org || '","action":"create","id":"' || id || '","resourceId":"' || gen_random_uuid()
              || '","resourceType":"Transaction","createdAtUtc":"' || created_at || '","changes":null}',
            created_at, status, attempts, 0, created_at + latency, case when status = 'pending' then now() + interval '1 minute' end,
            case when status = 'succeeded' then 200 else 503 end,
            case when status = 'succeeded' then created_at + latency end
       from (
         select (lpad(to_hex(floor(extract(epoch from t.created_at) * 1000)::bigint), 12, '0') || '7' || substr(md5(i::text), 1, 3)
                  || '8' || substr(md5(i::text || 'x'), 1, 15))::uuid as id,
                t.created_at,
                case when (i::bigint * $2::int / $1::int) <> ((i - 1)::bigint * $2::int / $1::int) then $3::uuid
                     else ($4::uuid[])[1 + i % $5::int] end as org,
                random() as r, random() as r2, random() as r3, random() as r4, random() as r5
           from generate_series(1, $1::int) i,
                lateral (select now() - interval '24 hours' + (i * (86400.0 / $1::int)) * interval '1 second' as created_at) t
       ) g,
       lateral (
         select case when r < 0.94 then 'succeeded' when r < 0.97 then 'succeeded' when r < 0.98 then 'failed' else 'pending' end as status,
                case when r < 0.94 then 1 when r < 0.97 then 2 + floor(r2 * 3)::int when r < 0.98 then 1 + floor(r2 * 11)::int
                     else 1 + floor(r2 * 8)::int end as attempts,
                case when r3 < 0.7 then org::uuid else ('00000000-0000-7000-8000-00000000000' || (1 + floor((r3 - 0.7) / 0.3 * 3)::int))::uuid end as endpoint,
                case when r5 < 0.6 then 'transaction' when r5 < 0.9 then 'nft' else 'kyc' end as webhook_type
       ) s,
       lateral (
         select (20 + (-ln(1 - r4) * 80) + case when r >= 0.94 and r < 0.97
                   then (array[5000, 35000, 155000])[attempts - 1] else 0 end) * interval '1 millisecond' as latency
       ) l`,
    [total, ROWS, organizationId, others, others.length],
  );
  log(`filled ${total} rows in ${Math.round((Date.now() - started) / 1000)} s; vacuum analyze…`);
  await db.query('vacuum analyze webhook_delivery');
  const counts = await db.query(
    `select organization_id = $1 as measured, status, count(*)::int as n from webhook_delivery group by 1, 2 order by 1 desc, 2`,
    [organizationId],
  );
  log(`rows: ${counts.rows.map((r) => `${r.measured ? 'org' : 'others'} ${r.status} ${r.n}`).join(', ')}`);
}

/** Drops a read bench's database when it is done (unless kept, for looking at it afterwards). */
export async function dropBenchDatabase(databaseUrl: string, keep: boolean, log: (line: string) => void): Promise<void> {
  if (keep) log(`kept ${databaseUrl}`);
  else await dropDatabase(databaseUrl);
}
