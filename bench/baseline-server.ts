/**
 * The raw read baseline: plain node:http and a `pg` pool running the service's own SQL (imported
 * from its repositories) and serialising the same JSON, with no framework around it. Started by
 * bench/run.ts as a child process, like the service, so both sides pay the same process costs.
 *
 *   BASELINE_DATABASE_URL=… BASELINE_ORGANIZATION_ID=… BASELINE_POOL_MAX=10 node -r ts-node/register bench/baseline-server.ts
 */
import 'reflect-metadata';
import { createServer, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { decodePageKey, encodePageKey } from '../src/common/pagination/page-key';
import { toPage } from '../src/common/pagination/page-query.dto';
import { MediaLinks } from '../src/modules/media/media-links';
import { MEDIA_LINK_TTL_SECONDS } from '../src/modules/media/media.rules';
import { TokenDto } from '../src/modules/tokens/dto/token.response.dto';
import { VISIBLE_TOKEN_SQL } from '../src/modules/tokens/token.repository';
import { tokenViewFromRow } from '../src/modules/tokens/token.view';
import { heldTokensFromRows, walletPageSql } from '../src/modules/transactions/balance-page.sql';
import { NftTokenBalanceDto } from '../src/modules/transactions/dto/nft-balance.response.dto';

const pool = new Pool({
  connectionString: process.env.BASELINE_DATABASE_URL,
  max: Number(process.env.BASELINE_POOL_MAX ?? 10),
});
const organizationId = process.env.BASELINE_ORGANIZATION_ID ?? '';

/** Knex-style `?` placeholders to PostgreSQL's `$n` (the benchmark never passes array parameters). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${(n += 1)}`);
}
const TOKEN_SQL = numbered(VISIBLE_TOKEN_SQL);
const pageSqlCache = new Map<string, string>();

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const BALANCES = /^\/v2\/wallets\/([0-9a-f-]{36})\/nft-balances$/;
const TOKEN = /^\/v1\/tokens\/([0-9a-f-]{36})$/;

/** Thumbnail links are signed per answer, as the service does (the key's value does not matter here). */
const linksNow = (host: string | undefined) =>
  new MediaLinks(`http://${host ?? 'localhost'}`, Buffer.alloc(32, 1), Math.floor(Date.now() / 1000) + MEDIA_LINK_TTL_SECONDS);

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://baseline');
  void (async () => {
    try {
      let match = BALANCES.exec(url.pathname);
      if (match) {
        const pageSize = Number(url.searchParams.get('pageSize') ?? 100);
        const pageKey = url.searchParams.get('pageKey');
        const afterTokenId = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
        const { sql, params } = walletPageSql({
          organizationId,
          walletId: match[1],
          afterTokenId,
          contractAddresses: null,
          limit: pageSize + 1,
        });
        let text = pageSqlCache.get(sql);
        if (!text) pageSqlCache.set(sql, (text = numbered(sql)));
        const rows = heldTokensFromRows((await pool.query(text, params)).rows);
        if (rows === null) return send(res, 404, { code: 'WALLET_NOT_FOUND' });
        const page = toPage(rows, pageSize, (last) => encodePageKey([last.tokenId]));
        return send(res, 200, {
          nftTokenBalances: page.items.map((item) => NftTokenBalanceDto.from(item, linksNow(req.headers.host))),
          nextPageKey: page.nextPageKey,
        });
      }
      match = TOKEN.exec(url.pathname);
      if (match) {
        const rows = (await pool.query(TOKEN_SQL, [organizationId, match[1]])).rows;
        if (rows.length === 0) return send(res, 404, { code: 'TOKEN_NOT_FOUND' });
        return send(res, 200, TokenDto.from(tokenViewFromRow(rows[0], 'tk_'), linksNow(req.headers.host)));
      }
      send(res, 404, { code: 'ROUTE_NOT_FOUND' });
    } catch (error) {
      send(res, 500, { error: String(error) });
    }
  })();
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.BASELINE_PORT ?? 0), '127.0.0.1', () => {
  process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
