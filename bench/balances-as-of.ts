import type { Client } from 'pg';

/** The as-of wallet: this many NFTs held at the end, each moved this many times (all touching the wallet). */
export const AS_OF_TOKENS = 10_000;
export const AS_OF_MOVES_PER_TOKEN = 10;
/** Hours between a token's consecutive movements. */
const STEP_HOURS = 1;

export interface AsOfWallet {
  walletId: string;
  /** After every movement: the wallet holds 2 of each token. */
  endAsOf: string;
  /** Between the 5th and 6th movement of every token: it holds 1 of each (and the other wallet none). */
  middleAsOf: string;
  movements: number;
}

/**
 * Seeds the `balancesAsOf` wallet of `npm run bench` in plain SQL: AS_OF_TOKENS tokens (contracts
 * spread like the other bench wallets, so the whitelist hides about half), each minted to the
 * wallet, moved to a second wallet and back four times, and minted once more: AS_OF_MOVES_PER_TOKEN
 * movements per token, AS_OF_TOKENS x AS_OF_MOVES_PER_TOKEN in all, an hour apart per step.
 * `contractSql` maps a row number expression to a contract address.
 */
export async function seedAsOfWallet(
  db: Client,
  organizationId: string,
  walletId: string,
  otherWalletId: string,
  contractSql: (n: string) => string,
): Promise<AsOfWallet> {
  const start = Date.UTC(2026, 0, 1);
  await db.query(
    `with t as (
       insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id", "name")
       select gen_random_uuid(), now(), $1, ${contractSql('i')}, '9' || lpad(i::text, 7, '0'), 'As-of NFT #' || i
         from generate_series(1, ${AS_OF_TOKENS}) i
       returning "id"),
     n as (select "id", row_number() over () as i from t),
     moves as (
       insert into "nft_transaction" ("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount")
       select gen_random_uuid(), to_timestamp(($4::bigint + k * ${STEP_HOURS * 3_600_000} + n.i) / 1000.0), $1,
              case when k in (0, 9) then 'nftMint' else 'nftTransfer' end, n."id",
              case when k in (0, 9) then null when k % 2 = 1 then $2::uuid else $3::uuid end,
              case when k in (0, 9) then $2::uuid when k % 2 = 1 then $3::uuid else $2::uuid end,
              1
         from n, generate_series(0, ${AS_OF_MOVES_PER_TOKEN - 1}) k
       returning 1)
     insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
     select $2, n."id", $1, 2, now() from n where (select count(*) from moves) > 0
     union all
     select $3, n."id", $1, 0, now() from n`,
    [organizationId, walletId, otherWalletId, start],
  );
  const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
  return {
    walletId,
    endAsOf: iso(start + 10 * STEP_HOURS * 3_600_000),
    middleAsOf: iso(start + 4.5 * STEP_HOURS * 3_600_000),
    movements: AS_OF_TOKENS * AS_OF_MOVES_PER_TOKEN,
  };
}

interface PageFigures {
  meanMs: number;
  p50: number;
  p99: number;
  rps: number;
}

/**
 * The `balancesAsOf` scenario: pages of the as-of wallet (first and middle page, at the end and at
 * a middle instant), one connection for `durationS` each, beside the current wallet-size figures.
 * `load` is the bench's HTTP load function; `page` its figures.
 */
export async function balancesAsOfScenario(ctx: {
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
  const [walletId, otherId] = [await ctx.createWallet(), await ctx.createWallet()];
  ctx.log(`balancesAsOf: seeding a wallet of ${AS_OF_TOKENS} NFTs with ${AS_OF_TOKENS * AS_OF_MOVES_PER_TOKEN} movements`);
  const wallet = await seedAsOfWallet(ctx.db, ctx.organizationId, walletId, otherId, ctx.contractSql);
  await ctx.db.query('vacuum analyze');
  const middle = (
    await ctx.db.query(`select "token_id" from "balance" where "wallet_id" = $1 order by "token_id" offset $2 limit 1`, [
      walletId,
      AS_OF_TOKENS / 2,
    ])
  ).rows[0].token_id as string;
  const pageKey = Buffer.from(JSON.stringify([middle])).toString('base64url');
  const figures: Record<string, PageFigures> = {};
  for (const [name, asOf, key] of [
    ['endFirstPage', wallet.endAsOf, null],
    ['endMiddlePage', wallet.endAsOf, pageKey],
    ['middleInstantFirstPage', wallet.middleAsOf, null],
    ['middleInstantMiddlePage', wallet.middleAsOf, pageKey],
    ['currentFirstPage', null, null],
  ] as const) {
    const query = new URLSearchParams({ pageSize: '100' });
    if (asOf) query.set('asOf', asOf);
    if (key) query.set('pageKey', key);
    const path = `/v2/wallets/${walletId}/nft-balances?${query.toString()}`;
    const check = await fetch(`${ctx.serviceUrl}${path}`, { headers: { authorization: `Bearer ${ctx.key}` } });
    const body = (await check.json()) as { nftTokenBalances: { amount: string }[] };
    if (check.status !== 200 || body.nftTokenBalances.length === 0) throw new Error(`balancesAsOf: ${path} answered ${check.status}`);
    const r = await ctx.load(ctx.serviceUrl, ctx.key, [path], 3, 1);
    figures[name] = { meanMs: r.mean, p50: r.p50, p99: r.p99, rps: r.rps };
    ctx.log(`balancesAsOf ${name}: mean ${r.mean} ms, p99 ${r.p99} ms (amount ${body.nftTokenBalances[0].amount})`);
  }
  return { tokens: AS_OF_TOKENS, movements: wallet.movements, pageSize: 100, ...figures };
}
