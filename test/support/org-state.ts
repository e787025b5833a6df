import { sql } from './nft';
import type { TestApp } from './test-app';

/** Tables whose rows a rejected request must leave exactly as they were. */
const HASHED_TABLES = [
  'organization',
  'api_key',
  'wallet',
  'token',
  'balance',
  'nft_transaction',
  'idempotency_key',
  'webhook_endpoint',
  'nft_whitelist',
  'nft_whitelist_contract',
];
/** Tables that background work updates (relay marks, delivery attempts): only their size is stable. */
const COUNTED_TABLES = ['domain_event', 'audit_entry'];

/** Everything an organization owns, as a comparable value: equal snapshots mean nothing changed. */
export async function orgState(t: TestApp, organizationId: string): Promise<Record<string, string>> {
  const parts = [
    ...HASHED_TABLES.map(
      (table) =>
        `select '${table}' as "table", count(*)::text || ':' || md5(coalesce(string_agg(r::text, '|' order by r::text), '')) as "value"
           from "${table}" r where "${table === 'organization' ? 'id' : 'organization_id'}" = ?`,
    ),
    ...COUNTED_TABLES.map((table) => `select '${table}', count(*)::text from "${table}" where "organization_id" = ?`),
  ];
  // One round trip: the fuzz suite takes a snapshot after every request.
  const rows = await sql<{ table: string; value: string }>(
    t,
    parts.join(' union all '),
    parts.map(() => organizationId),
  );
  return Object.fromEntries(rows.map((row) => [row.table, row.value]));
}
