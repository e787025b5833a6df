/**
 * The raw write baseline: plain node:http and a `pg` pool recording a mint (POST /v1/transactions
 * without fromWalletId) with the same statements the service runs, in one transaction, and
 * answering the same JSON. No framework, no auth, no validation beyond what the SQL needs.
 * Started by bench/request-path.ts as a child process, like the service.
 *
 *   BASELINE_DATABASE_URL=… BASELINE_ORGANIZATION_ID=… BASELINE_POOL_MAX=10 node -r ts-node/register bench/write-baseline-server.ts
 */
import 'reflect-metadata';
import { createServer, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { formatUtc } from '../src/common/time';

const pool = new Pool({ connectionString: process.env.BASELINE_DATABASE_URL, max: Number(process.env.BASELINE_POOL_MAX ?? 10) });
const organizationId = process.env.BASELINE_ORGANIZATION_ID ?? '';
const UINT256_MAX = ((1n << 256n) - 1n).toString();

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The service's mint, statement for statement (see TransactionsService.create). */
async function mint(tokenId: string, toWalletId: string, amount: string) {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const token = await client.query('select "id" from "token" where "organization_id" = $1 and "id" = any($2::uuid[])', [
      organizationId,
      [tokenId],
    ]);
    if (token.rowCount === 0) throw Object.assign(new Error('TOKEN_NOT_FOUND'), { status: 404 });
    const wallet = await client.query('select "id" from "wallet" where "organization_id" = $1 and "id" = any($2::uuid[])', [
      organizationId,
      [toWalletId],
    ]);
    if (wallet.rowCount === 0) throw Object.assign(new Error('WALLET_NOT_FOUND'), { status: 404 });
    const credited = await client.query(
      `insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
       values ($1, $2, $3, $4::numeric, now())
       on conflict ("wallet_id", "token_id") do update
         set "amount" = "balance"."amount" + excluded."amount", "updated_at" = excluded."updated_at"
         where "balance"."amount" + excluded."amount" <= $5::numeric
       returning "amount"`,
      [toWalletId, tokenId, organizationId, amount, UINT256_MAX],
    );
    if (credited.rowCount === 0) throw Object.assign(new Error('BALANCE_OVERFLOW'), { status: 422 });
    const id = uuidv7();
    const createdAt = new Date();
    await client.query(
      `insert into "nft_transaction" ("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount")
       values ($1, $2, $3, 'nftMint', $4, null, $5, $6)`,
      [id, createdAt, organizationId, tokenId, toWalletId, amount],
    );
    await client.query(
      `insert into "domain_event" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action", "changes", "relayed_at", "processed_at")
       values ($1, $2, $3, 'transaction', 'Transaction', $4, 'create', null, null, null)`,
      [uuidv7(), createdAt, organizationId, id],
    );
    await client.query('commit');
    return { id, organizationId, type: 'nftMint', tokenId, fromWalletId: null, toWalletId, amount, createdAtUtc: formatUtc(createdAt) };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    void (async () => {
      try {
        if (req.method !== 'POST' || req.url !== '/v1/transactions') return send(res, 404, { code: 'ROUTE_NOT_FOUND' });
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { tokenId: string; toWalletId: string; amount?: string };
        send(res, 201, await mint(body.tokenId.toLowerCase(), body.toWalletId.toLowerCase(), body.amount ?? '1'));
      } catch (error) {
        const status = (error as { status?: number }).status ?? 500;
        send(res, status, { error: String(error) });
      }
    })();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
