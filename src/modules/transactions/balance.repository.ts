import { EntityManager, EntityRepository } from '@mikro-orm/postgresql';
import { execute, outsideTransaction, queryRows } from '../../database/raw-sql';
import { heldTokensFromRows, HeldToken, walletPageAsOfSql, walletPageSql, WalletPageQuery } from './balance-page.sql';
import { BALANCE_CAP, BalanceRowKey, inLockOrder } from './balance.rules';
import type { Balance } from './balance.entity';

export type { HeldToken, WalletPageQuery } from './balance-page.sql';

/** A net change of one balance row; `organizationId` is the row's, used when the row is created. */
export interface BalanceChange extends BalanceRowKey {
  organizationId: string;
  delta: bigint;
}

/** One movement of the API: no sender mints, no receiver burns. */
export interface BalanceMovement {
  tokenId: string;
  fromWalletId: string | null;
  toWalletId: string | null;
  /** uint256 decimal. */
  amount: string;
}

/** Why a movement changed nothing: the wallet that could not give or could not take it. */
export interface MovementRefusal {
  code: 'INSUFFICIENT_BALANCE' | 'BALANCE_OVERFLOW';
  walletId: string;
}

const keyOf = (row: BalanceRowKey) => `${row.walletId}/${row.tokenId}`;
const rowOf = (key: string): BalanceRowKey => ({ walletId: key.slice(0, key.indexOf('/')), tokenId: key.slice(key.indexOf('/') + 1) });

/**
 * The only writer of `balance`; every write of the ledger (API movements and batches, chain
 * movements and reverts) goes through these methods, on the caller's transaction.
 *
 * - Lock order: a statement that locks or changes several rows walks them in ascending
 *   (wallet id, token id) order (`inLockOrder`), and a write that changes rows after deciding
 *   on them locks all of them first (`lockOrCreate`, `lockExisting`), so writers queue on rows in
 *   one global order and never deadlock one another.
 * - Cap: no row holds more than 2^256-1 (`BALANCE_CAP`): a credit past it is refused by the very
 *   statement that would write it. The floor is the table's own check (`amount >= 0`).
 * - Rows are never deleted: a row that reaches zero stays, and reads filter on `amount > 0`.
 */
export class BalanceRepository extends EntityRepository<Balance> {
  /**
   * One movement, a statement per row in the lock order: a debit is one conditional UPDATE
   * (`amount >= x`), so it takes the units or touches nothing, and concurrent debits of the same
   * row queue on its lock and re-check the condition; a credit is one upsert refused past the
   * cap. Returns the refusal of the first row that could not change (the caller rolls back).
   * Wallet and token must exist (foreign keys).
   */
  async move(em: EntityManager, organizationId: string, movement: BalanceMovement): Promise<MovementRefusal | null> {
    const { tokenId, amount } = movement;
    const steps = inLockOrder([
      ...(movement.fromWalletId === null ? [] : [{ walletId: movement.fromWalletId, tokenId, change: 'debit' as const }]),
      ...(movement.toWalletId === null ? [] : [{ walletId: movement.toWalletId, tokenId, change: 'credit' as const }]),
    ]);
    for (const step of steps) {
      if (step.change === 'debit') {
        const debited = await execute(
          em,
          `update "balance" set "amount" = "amount" - ?::numeric, "updated_at" = now()
            where "wallet_id" = ? and "token_id" = ? and "amount" >= ?::numeric`,
          [amount, step.walletId, tokenId, amount],
        );
        if (debited === 0) return { code: 'INSUFFICIENT_BALANCE', walletId: step.walletId };
      } else {
        const credited = await execute(
          em,
          `insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
           values (?, ?, ?, ?::numeric, now())
           on conflict ("wallet_id", "token_id") do update
             set "amount" = "balance"."amount" + excluded."amount", "updated_at" = excluded."updated_at"
             where "balance"."amount" + excluded."amount" <= ?::numeric`,
          [step.walletId, tokenId, organizationId, amount, BALANCE_CAP.toString()],
        );
        if (credited === 0) return { code: 'BALANCE_OVERFLOW', walletId: step.walletId };
      }
    }
    return null;
  }

  /**
   * Locks the rows of `pairs` (keys `walletId/tokenId`) in ONE statement that walks them in the
   * lock order: a missing row is created, an existing one updated in place. Every row a batch
   * touches is thus locked before it changes anything, and an in-memory replay of the batch over
   * the amounts is exact until commit. Rows in `credits` (only ever credited by the batch) get
   * their credit in the same statement, unless it would pass the cap; the others are locked
   * unchanged. Returns the amounts before this statement; a row whose credit was refused reports
   * its locked amount, so the replay finds the overflowing movement.
   * Wallets and tokens must exist (foreign keys).
   */
  async lockOrCreate(
    em: EntityManager,
    organizationId: string,
    pairs: string[],
    credits: ReadonlyMap<string, bigint>,
  ): Promise<Map<string, bigint>> {
    if (pairs.length === 0) return new Map();
    const sorted = inLockOrder(pairs.map(rowOf));
    const rows = await queryRows<{ wallet_id: string; token_id: string; amount: string }>(
      em,
      `insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
       select p."wallet_id", p."token_id", ?, p."credit", now()
         from unnest(?::uuid[], ?::uuid[], ?::numeric[]) with ordinality as p("wallet_id", "token_id", "credit", "n")
        order by p."n"
       on conflict ("wallet_id", "token_id") do update
         set "amount" = "balance"."amount" + excluded."amount",
             "updated_at" = case when excluded."amount" = 0 then "balance"."updated_at" else excluded."updated_at" end
         where "balance"."amount" + excluded."amount" <= ?::numeric
       returning "wallet_id", "token_id", "amount"::text as "amount"`,
      [
        organizationId,
        sorted.map((row) => row.walletId),
        sorted.map((row) => row.tokenId),
        sorted.map((row) => (credits.get(keyOf(row)) ?? 0n).toString()),
        BALANCE_CAP.toString(),
      ],
    );
    const before = new Map(
      rows.map((row) => [`${row.wallet_id}/${row.token_id}`, BigInt(row.amount) - (credits.get(`${row.wallet_id}/${row.token_id}`) ?? 0n)]),
    );
    const refused = sorted.filter((row) => !before.has(keyOf(row)));
    if (refused.length > 0) {
      // ON CONFLICT ... WHERE locks the row even when it refuses the update.
      const current = await queryRows<{ wallet_id: string; token_id: string; amount: string }>(
        em,
        `select b."wallet_id", b."token_id", b."amount"::text as "amount"
           from "balance" b join unnest(?::uuid[], ?::uuid[]) as p("wallet_id", "token_id")
             on b."wallet_id" = p."wallet_id" and b."token_id" = p."token_id"`,
        [refused.map((row) => row.walletId), refused.map((row) => row.tokenId)],
      );
      for (const row of current) before.set(`${row.wallet_id}/${row.token_id}`, BigInt(row.amount));
    }
    return before;
  }

  /**
   * Locks the existing rows of `pairs` in ONE statement that walks them in the lock order,
   * creating none (a chain write may not know a row's token yet). Returns the locked amounts by
   * `walletId/tokenId`; a pair without a row holds zero.
   */
  async lockExisting(em: EntityManager, pairs: BalanceRowKey[]): Promise<Map<string, bigint>> {
    if (pairs.length === 0) return new Map();
    const sorted = inLockOrder(pairs);
    const rows = await queryRows<{ wallet_id: string; token_id: string; amount: string }>(
      em,
      `select b."wallet_id", b."token_id", b."amount"::text as "amount"
         from unnest(?::uuid[], ?::uuid[]) with ordinality as p("wallet_id", "token_id", "n")
         cross join lateral (
           select * from "balance" b where b."wallet_id" = p."wallet_id" and b."token_id" = p."token_id" for update
         ) b
        order by p."n"`,
      [sorted.map((p) => p.walletId), sorted.map((p) => p.tokenId)],
    );
    return new Map(rows.map((row) => [`${row.wallet_id}/${row.token_id}`, BigInt(row.amount)]));
  }

  /**
   * Adds each change to its row, in the lock order: rows in `locked` (locked earlier in this
   * transaction by lockOrCreate or lockExisting) are updated in place in one statement; the
   * others (never held, so only credits reach them) are inserted, or added to if one appeared
   * meanwhile, in one statement. A change that would pass the cap, or of a locked row that is not
   * there, is a planning error: it throws and the caller's transaction rolls back, as does a
   * result below zero (the table's check).
   */
  async applyChanges(em: EntityManager, changes: readonly BalanceChange[], locked: { has(key: string): boolean }): Promise<void> {
    const sorted = inLockOrder(changes);
    const existing = sorted.filter((change) => locked.has(keyOf(change)));
    const fresh = sorted.filter((change) => !locked.has(keyOf(change)));
    if (existing.length > 0) {
      const updated = await execute(
        em,
        `update "balance" b set "amount" = b."amount" + c."delta", "updated_at" = now()
           from unnest(?::uuid[], ?::uuid[], ?::numeric[]) as c("wallet_id", "token_id", "delta")
          where b."wallet_id" = c."wallet_id" and b."token_id" = c."token_id" and b."amount" + c."delta" <= ?::numeric`,
        [existing.map((c) => c.walletId), existing.map((c) => c.tokenId), existing.map((c) => c.delta.toString()), BALANCE_CAP.toString()],
      );
      if (updated !== existing.length)
        throw new Error(`Balance changes not applied: ${existing.length - updated} of ${existing.length} refused.`);
    }
    if (fresh.length > 0) {
      const written = await execute(
        em,
        `insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
         select d."wallet_id", d."token_id", d."organization_id", d."delta", now()
           from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::numeric[]) with ordinality as d("wallet_id", "token_id", "organization_id", "delta", "n")
          order by d."n"
         on conflict ("wallet_id", "token_id") do update
           set "amount" = "balance"."amount" + excluded."amount", "updated_at" = excluded."updated_at"
           where "balance"."amount" + excluded."amount" <= ?::numeric`,
        [
          fresh.map((c) => c.walletId),
          fresh.map((c) => c.tokenId),
          fresh.map((c) => c.organizationId),
          fresh.map((c) => c.delta.toString()),
          BALANCE_CAP.toString(),
        ],
      );
      if (written !== fresh.length) throw new Error(`Balance changes not applied: ${fresh.length - written} of ${fresh.length} refused.`);
    }
  }

  /** One page of what a wallet holds (walletPageSql); null when the wallet is not the organization's. */
  async walletPage(query: WalletPageQuery): Promise<HeldToken[] | null> {
    const { sql, params } = walletPageSql(query);
    return heldTokensFromRows(await queryRows(outsideTransaction(this.getEntityManager()), sql, params));
  }

  /** One page of what a wallet held at `query.asOf`, read from the movement ledger (walletPageAsOfSql). */
  async walletPageAsOf(query: WalletPageQuery & { asOf: string }): Promise<HeldToken[] | null> {
    const { sql, params } = walletPageAsOfSql(query);
    return heldTokensFromRows(await queryRows(outsideTransaction(this.getEntityManager()), sql, params));
  }
}
