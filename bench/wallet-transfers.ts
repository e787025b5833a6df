import type { Client } from 'pg';
import { spamFilterSql } from '../src/modules/spam/spam-filter';
import { walletTransfersSql, type WalletTransfersQuery } from '../src/modules/transactions/wallet-transfers.sql';

/** The activity wallet: this many movements touch it (among as many of other wallets), over this many tokens. */
export const FEED_MOVEMENTS = 100_000;
const FEED_TOKENS = 1_000;

interface PageFigures {
  service: { meanMs: number; p50: number; p99: number; rps: number };
  /** The service's statement alone, run by a plain pg client in a loop. */
  rawSql: { p50: number; p99: number };
}

const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const round = (n: number) => Math.round(n * 100) / 100;

/** Positional placeholders for pg from the service's `?` ones. */
function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

/**
 * The `walletTransfers` scenario of `npm run bench`: a wallet with FEED_MOVEMENTS movements (a
 * mint, then transfers out and back, a minute apart, over FEED_TOKENS tokens of contracts half of
 * which the organization's whitelist hides), beside as many movements between two other wallets.
 * Pages of its activity feed (first, middle, filtered by type, spam excluded), one connection for
 * `durationS` each, against the same statement run raw by a pg client.
 */
export async function walletTransfersScenario(ctx: {
  db: Client;
  serviceUrl: string;
  key: string;
  organizationId: string;
  createWallet: () => Promise<string>;
  contractSql: (n: string) => string;
  load: (
    url: string,
    key: string,
    paths: string[],
    durationS: number,
    connections: number,
  ) => Promise<{ mean: number; p50: number; p99: number; rps: number }>;
  log: (message: string) => void;
}): Promise<Record<string, unknown>> {
  const [walletId, otherId, thirdId] = [await ctx.createWallet(), await ctx.createWallet(), await ctx.createWallet()];
  ctx.log(`walletTransfers: seeding ${FEED_MOVEMENTS} movements of one wallet and ${FEED_MOVEMENTS} of others`);
  const start = Date.UTC(2026, 0, 1);
  await ctx.db.query(
    `with t as (
       insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id", "name")
       select gen_random_uuid(), now(), $1, ${ctx.contractSql('i')}, '7' || lpad(i::text, 7, '0'), 'Feed NFT #' || i
         from generate_series(1, ${FEED_TOKENS}) i
       returning "id"),
     n as (select "id", row_number() over () as i from t)
     insert into "nft_transaction" ("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount")
     select gen_random_uuid(), to_timestamp(($5::bigint + (k * ${FEED_TOKENS} + n.i) * 60000) / 1000.0), $1,
            case when k = 0 then 'nftMint' else 'nftTransfer' end, n."id",
            case when k = 0 then null when k % 2 = 1 then $2::uuid else $3::uuid end,
            case when k = 0 then $2::uuid when k % 2 = 1 then $3::uuid else $2::uuid end,
            1
       from n, generate_series(0, ${FEED_MOVEMENTS / FEED_TOKENS - 1}) k
     union all
     select gen_random_uuid(), to_timestamp(($5::bigint + (k * ${FEED_TOKENS} + n.i) * 60000 + 30000) / 1000.0), $1,
            'nftTransfer', n."id", case when k % 2 = 0 then $3::uuid else $4::uuid end, case when k % 2 = 0 then $4::uuid else $3::uuid end, 1
       from n, generate_series(0, ${FEED_MOVEMENTS / FEED_TOKENS - 1}) k`,
    [ctx.organizationId, walletId, otherId, thirdId, start],
  );
  await ctx.db.query('vacuum analyze');
  const middle = (
    await ctx.db.query(
      `select to_char("created_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"') as "at", "id" from "nft_transaction"
        where "to_wallet_id" = $1 or "from_wallet_id" = $1 order by "created_at" desc, "id" desc offset $2 limit 1`,
      [walletId, FEED_MOVEMENTS / 2],
    )
  ).rows[0] as { at: string; id: string };
  const pageKey = Buffer.from(JSON.stringify([middle.at, middle.id])).toString('base64url');

  const figures: Record<string, PageFigures> = {};
  for (const [name, extra, after, spam] of [
    ['firstPage', {}, null, undefined],
    ['middlePage', {}, middle, undefined],
    ['transfersOnly', { types: 'nftTransfer' }, null, undefined],
    ['spamExcluded', { spam: 'exclude' }, null, 'exclude'],
  ] as const) {
    const query = new URLSearchParams({ pageSize: '100', ...extra });
    if (after) query.set('pageKey', pageKey);
    const path = `/v1/wallets/${walletId}/transfers?${query.toString()}`;
    const check = await fetch(`${ctx.serviceUrl}${path}`, { headers: { authorization: `Bearer ${ctx.key}` } });
    const body = (await check.json()) as { transfers: unknown[] };
    if (check.status !== 200 || body.transfers.length !== 100) throw new Error(`walletTransfers: ${path} answered ${check.status}`);
    const r = await ctx.load(ctx.serviceUrl, ctx.key, [path], 3, 1);

    const sqlQuery: WalletTransfersQuery = {
      organizationId: ctx.organizationId,
      walletId,
      types: 'types' in extra ? ['nftTransfer'] : null,
      chainId: null,
      since: null,
      until: null,
      status: null,
      contractAddresses: null,
      tokenCondition: spamFilterSql(spam, 't', 'x."organization_id"'),
      after: after ? { createdAt: after.at, id: after.id } : null,
      limit: 101,
    };
    const { sql, params } = walletTransfersSql(sqlQuery);
    const text = numbered(sql);
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = process.hrtime.bigint();
      await ctx.db.query(text, params);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    figures[name] = {
      service: { meanMs: r.mean, p50: r.p50, p99: r.p99, rps: r.rps },
      rawSql: { p50: round(percentile(times, 50)), p99: round(percentile(times, 99)) },
    };
    ctx.log(`walletTransfers ${name}: service p99 ${r.p99} ms (mean ${r.mean}), raw SQL p99 ${figures[name].rawSql.p99} ms`);
  }
  return { movementsOfWallet: FEED_MOVEMENTS, movementsInAll: 2 * FEED_MOVEMENTS, pageSize: 100, ...figures };
}
