/**
 * Measures the wallet balances page with the NFT whitelist on and off, on a scratch database:
 * a wallet of 10,000 NFTs and an organization whitelist of 10,000 contracts, among other
 * organizations' data. Runs the service's own balances query (captured from BalanceRepository)
 * under EXPLAIN (ANALYZE, BUFFERS) and prints timings and plans, next to two proposed rewrites:
 *   - "proposed": the token joined by primary key only, and the whitelist read for the wallet's
 *     organization (constant for the query) instead of per token row. No schema change.
 *   - "denormalized": additionally balance.contract_address with a covering partial index, so the
 *     filter never touches the token heap (measured inside a transaction that is rolled back).
 *
 *   npx ts-node --swc bench/whitelist-explain.ts [postgresql://…/nftw_explain] [--plans]
 *
 * The database is created, migrated and filled on the first run; later runs reuse it.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { runMigrations } from '../src/database/migrate';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { ENTITIES } from '../src/orm-model';
import { Balance } from '../src/modules/transactions/balance.entity';
import { Token } from '../src/modules/tokens/token.entity';
import { tokenColumnsSql } from '../src/modules/tokens/token.view';
import { whitelistVisibleForSql } from '../src/modules/whitelist/whitelist-filter';

const DATABASE_URL = process.argv[2] ?? 'postgresql://postgres@127.0.0.1:5432/nftw_explain';
const ORG = '01a20000-0000-7000-8000-00000000b001';
/** A wallet whose every NFT is whitelisted, one where 1 in 10 is, and one where none is. */
const WALLETS = {
  allWhitelisted: '01a20000-0000-7000-8000-00000000c001',
  tenthWhitelisted: '01a20000-0000-7000-8000-00000000c002',
  noneWhitelisted: '01a20000-0000-7000-8000-00000000c003',
  /** 20 whitelisted NFTs with the organization's newest token ids (UUIDv7 ids grow with time). */
  recentSmall: '01a20000-0000-7000-8000-00000000c004',
} as const;
const NFTS_PER_WALLET = 10_000;
const WHITELIST_SIZE = 10_000;
/** Other tenants, so that the whitelist table holds far more than one organization's rows. */
const OTHER_ORGS = 20;
const RUNS = 7;

/** 40 hex digits derived from a tag and a number: spread like real addresses. */
const address = (tag: string, n: string) => `'0x' || substr(md5('${tag}' || ${n}) || md5('${tag}${tag}' || ${n}), 1, 40)`;

async function seed(db: Client): Promise<void> {
  const seeded = await db.query('select 1 from "organization" where "id" = $1', [ORG]);
  if (seeded.rowCount) return;
  console.log('seeding…');
  await db.query('begin');
  await db.query(`insert into "organization" ("id", "created_at", "name") values ($1, now(), 'bench')`, [ORG]);
  await db.query(
    `insert into "organization" ("id", "created_at", "name")
     select gen_random_uuid(), now(), 'tenant ' || o from generate_series(1, ${OTHER_ORGS}) o`,
  );
  const walletRows = Object.values(WALLETS)
    .map((id) => `('${id}', now(), '${ORG}')`)
    .join(', ');
  await db.query(`insert into "wallet" ("id", "created_at", "organization_id") values ${walletRows}`);

  // Whitelisted contracts are c<i>; tokens of contracts d<i> are never whitelisted.
  const walletPlans: [string, string][] = [
    [WALLETS.allWhitelisted, address('c', 'i')],
    [WALLETS.tenthWhitelisted, `case when i % 10 = 0 then ${address('c', 'i')} else ${address('d', 'i')} end`],
    [WALLETS.noneWhitelisted, address('d', '(i + 20000)')],
  ];
  for (const [index, [walletId, contract]] of walletPlans.entries()) {
    await db.query(
      `with t as (
         insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id", "name")
         select gen_random_uuid(), now(), '${ORG}', ${contract}, '${index + 1}' || i, 'NFT ' || i
           from generate_series(1, ${NFTS_PER_WALLET}) i
         returning "id")
       insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
       select '${walletId}', t."id", '${ORG}', 1, now() from t`,
    );
  }
  await db.query(
    `with t as (
       insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id")
       select ('ffffffff-ffff-7fff-bfff-' || lpad(i::text, 12, '0'))::uuid, now(), '${ORG}', ${address('c', 'i')}, '9' || i
         from generate_series(1, 20) i
       returning "id")
     insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
     select '${WALLETS.recentSmall}', t."id", '${ORG}', 1, now() from t`,
  );
  await db.query(`insert into "nft_whitelist" ("organization_id", "enabled", "updated_at") select "id", true, now() from "organization"`);
  await db.query(
    `insert into "nft_whitelist_contract" ("organization_id", "contract_address", "created_at")
     select o."id", case when o."id" = '${ORG}' then ${address('c', 'i')} else ${address('e', 'i')} end, now()
       from "organization" o cross join generate_series(1, ${WHITELIST_SIZE}) i`,
  );
  // Other tenants hold NFTs too: 5,000 each in one wallet.
  await db.query(
    `with w as (
       insert into "wallet" ("id", "created_at", "organization_id")
       select gen_random_uuid(), now(), "id" from "organization" where "id" <> '${ORG}' returning "id", "organization_id"),
     t as (
       insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id")
       select gen_random_uuid(), now(), w."organization_id", ${address('e', '(i % 500)')}, i::text
         from w cross join generate_series(1, 5000) i
       returning "id", "organization_id")
     insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
     select w."id", t."id", t."organization_id", 1, now() from t join w using ("organization_id")`,
  );
  await db.query('commit');
  await db.query('vacuum analyze');
}

interface Captured {
  sql: string;
  params: readonly unknown[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A first page (or the page after `afterTokenId`) of the wallet, as the proposed rewrites read it. */
function proposedSql(variant: 'proposed' | 'denormalized', walletId: string, afterTokenId: string | null, limit: number): string {
  const after = afterTokenId ? `and b."token_id" > '${afterTokenId}'` : '';
  const token = tokenColumnsSql('t', 'tk_');
  if (variant === 'proposed') {
    return `select w."id" as "walletId", p.*
      from "wallet" w
      left join lateral (
        select b."token_id" as "tokenId", b."amount"::text as "amount", ${token}
          from "balance" b
          join "token" t on t."id" = b."token_id"
         where b."wallet_id" = w."id" and b."amount" > 0 ${after}
           and ${whitelistVisibleForSql('w."organization_id"', 't."contract_address"')}
         order by b."token_id"
         limit ${limit}
      ) p on true
     where w."id" = '${walletId}' and w."organization_id" = '${ORG}'
     order by p."tokenId"`;
  }
  return `select w."id" as "walletId", p."tokenId", p."amount", ${token}
      from "wallet" w
      left join lateral (
        select b."token_id" as "tokenId", b."amount"::text as "amount"
          from "balance" b
         where b."wallet_id" = w."id" and b."amount" > 0 ${after}
           and ${whitelistVisibleForSql('w."organization_id"', 'b."contract_address"')}
         order by b."token_id"
         limit ${limit}
      ) p on true
      left join "token" t on t."id" = p."tokenId"
     where w."id" = '${walletId}' and w."organization_id" = '${ORG}'
     order by p."tokenId"`;
}

async function main(): Promise<void> {
  await ensureDatabase(DATABASE_URL);
  let captured: Captured | null = null;
  const config = loadConfig({ NODE_ENV: 'development', DATABASE_URL });
  const orm = await MikroORM.init({
    ...buildOrmOptions(config, { entities: ENTITIES }),
    onQuery: (sql: string, params: readonly unknown[]) => {
      captured = { sql, params };
      return sql;
    },
  });
  const db = new Client({ connectionString: DATABASE_URL });
  await db.connect();
  const showPlans = process.argv.includes('--plans');
  try {
    await runMigrations(orm, DATABASE_URL);
    await seed(db);
    const platform = orm.em.getPlatform();
    const setEnabled = (enabled: boolean) =>
      db.query('update "nft_whitelist" set "enabled" = $1 where "organization_id" = $2', [enabled, ORG]);

    async function explain(sql: string): Promise<{ ms: number; plan: string; rows: number }> {
      const explained = await db.query(`explain (analyze, buffers) ${sql}`);
      const plan = explained.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      return {
        ms: Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]),
        rows: Number(/^\S.*?actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/m.exec(plan)?.[1]),
        plan,
      };
    }

    /** The service's own call, timed end to end, then EXPLAIN ANALYZE of the SQL it sent. */
    async function measureService(label: string, run: () => Promise<unknown>): Promise<string> {
      const wall: number[] = [];
      const exec: number[] = [];
      let last = { ms: 0, plan: '', rows: 0 };
      for (let i = 0; i < RUNS; i += 1) {
        const started = process.hrtime.bigint();
        await run();
        wall.push(Number(process.hrtime.bigint() - started) / 1e6);
        const query = captured;
        if (!query) throw new Error('no query captured');
        last = await explain(platform.formatQuery(query.sql, [...query.params]));
        exec.push(last.ms);
      }
      console.log(
        `${label.padEnd(64)} rows ${String(last.rows).padStart(4)}  exec ${median(exec).toFixed(2).padStart(7)} ms  ` +
          `call ${median(wall).toFixed(2).padStart(7)} ms`,
      );
      return last.plan;
    }

    async function measureSql(label: string, sql: string): Promise<string> {
      const exec: number[] = [];
      let last = { ms: 0, plan: '', rows: 0 };
      for (let i = 0; i < RUNS; i += 1) {
        last = await explain(sql);
        exec.push(last.ms);
      }
      console.log(`${label.padEnd(64)} rows ${String(last.rows).padStart(4)}  exec ${median(exec).toFixed(2).padStart(7)} ms`);
      return last.plan;
    }

    const page = (walletId: string, afterTokenId: string | null, limit: number) => () =>
      orm.em.fork().getRepository(Balance).walletPage({ organizationId: ORG, walletId, afterTokenId, contractAddresses: null, limit });
    const middleOf = async (walletId: string) =>
      (
        await db.query('select "token_id" from "balance" where "wallet_id" = $1 order by "token_id" offset $2 limit 1', [
          walletId,
          NFTS_PER_WALLET / 2,
        ])
      ).rows[0]?.token_id as string | undefined;

    const cases: { label: string; walletId: string; after: string | null; limit: number }[] = [];
    for (const [name, walletId] of Object.entries(WALLETS)) {
      cases.push({ label: `${name}, first page`, walletId, after: null, limit: 101 });
      const middle = await middleOf(walletId);
      if (middle) cases.push({ label: `${name}, page after the 5,000th NFT`, walletId, after: middle, limit: 101 });
    }
    cases.push({ label: 'allWhitelisted, first page of 1000', walletId: WALLETS.allWhitelisted, after: null, limit: 1001 });

    const plans: string[] = [];
    for (const enabled of [false, true]) {
      await setEnabled(enabled);
      console.log(`\n== whitelist ${enabled ? 'ON' : 'OFF'} (service query: exec = EXPLAIN ANALYZE, call = repository call) ==`);
      for (const c of cases) {
        const plan = await measureService(`service   ${c.label}`, page(c.walletId, c.after, c.limit));
        if (enabled && c.after === null && c.limit === 101) plans.push(`-- service, whitelist on, ${c.label}\n${plan}`);
      }
      for (const c of cases) {
        const plan = await measureSql(`proposed  ${c.label}`, proposedSql('proposed', c.walletId, c.after, c.limit));
        if (enabled && c.after === null && c.limit === 101) plans.push(`-- proposed, whitelist on, ${c.label}\n${plan}`);
      }
      const hiddenToken = (await db.query('select "token_id" from "balance" where "wallet_id" = $1 limit 1', [WALLETS.noneWhitelisted]))
        .rows[0].token_id as string;
      const plan = await measureService('service   token by id (not whitelisted)', () =>
        orm.em.fork().getRepository(Token).findVisible(ORG, hiddenToken),
      );
      if (enabled) plans.push(`-- service, whitelist on, token by id\n${plan}`);
    }

    // The schema change of the "denormalized" proposal, tried and rolled back.
    await db.query('begin');
    try {
      await db.query('alter table "balance" add column "contract_address" text');
      await db.query('update "balance" b set "contract_address" = t."contract_address" from "token" t where t."id" = b."token_id"');
      await db.query('drop index "balance_wallet_held_index"');
      await db.query(
        'create index "balance_wallet_held_index" on "balance" ("wallet_id", "token_id") include ("amount", "contract_address") where "amount" > 0',
      );
      await db.query('analyze "balance"');
      for (const enabled of [false, true]) {
        await db.query('update "nft_whitelist" set "enabled" = $1 where "organization_id" = $2', [enabled, ORG]);
        console.log(`\n== whitelist ${enabled ? 'ON' : 'OFF'}, with balance.contract_address (rolled back afterwards) ==`);
        for (const c of cases) {
          const plan = await measureSql(`denorm.   ${c.label}`, proposedSql('denormalized', c.walletId, c.after, c.limit));
          if (enabled && c.after === null && c.limit === 101) plans.push(`-- denormalized, whitelist on, ${c.label}\n${plan}`);
        }
      }
    } finally {
      await db.query('rollback');
    }
    if (showPlans) console.log(`\n${plans.join('\n\n')}`);
  } finally {
    await db.end();
    await orm.close(true);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
