import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The one place raw SQL runs. Every statement takes `?` placeholders whose values are sent as
 * protocol parameters rather than inlined into the SQL text (as `em.execute` does), and arrays
 * stay PostgreSQL arrays (`= any(?::uuid[])`, `unnest(?::text[])`), which is what set-based
 * statements over a whole batch need.
 *
 * A statement runs on one of:
 * - an EntityManager: its current transaction, or the pool outside one;
 * - `outsideTransaction(em)`: the pool, even when the caller is in a transaction (statements that
 *   commit on their own, e.g. batched deletes each in a short transaction of its own);
 * - a Knex transaction opened with `knexTransaction`, for code that batches several raw
 *   statements in one transaction without the unit of work.
 */
export type SqlTarget = EntityManager | Knex;

/** What `knex.raw` resolves to on PostgreSQL (pg's result), typed by the caller's row shape. */
export interface PgResult<T> {
  rows: T[];
  rowCount: number | null;
}

function knexOf(target: SqlTarget): Knex {
  if (typeof target === 'function') return target;
  return target.getTransactionContext<Knex.Transaction>() ?? target.getKnex();
}

async function run<T>(target: SqlTarget, sql: string, params: readonly unknown[]): Promise<PgResult<T>> {
  return knexOf(target).raw<PgResult<T>>(sql, params as Knex.RawBinding[]);
}

/** The rows one statement returns (a select, or a write with `returning`). */
export async function queryRows<T = Record<string, unknown>>(
  target: SqlTarget,
  sql: string,
  params: readonly unknown[] = [],
): Promise<T[]> {
  return (await run<T>(target, sql, params)).rows;
}

/** Runs one statement and returns how many rows it touched (0 for statements without a count). */
export async function execute(target: SqlTarget, sql: string, params: readonly unknown[] = []): Promise<number> {
  return (await run<never>(target, sql, params)).rowCount ?? 0;
}

/**
 * Session settings (`set local statement_timeout = 5000`) and other statements PostgreSQL does
 * not take parameters in: the text runs as written, so it must hold only constants the code
 * built itself, never input. Several statements may be separated by `;`.
 */
export async function executeScript(target: SqlTarget, sql: string): Promise<void> {
  await knexOf(target).raw(sql);
}

/** The pool behind `em`, ignoring any transaction `em` is in: see SqlTarget. */
export function outsideTransaction(em: EntityManager): Knex {
  return em.getKnex();
}

/** Runs `work` in a Knex transaction of its own (outside the unit of work), committed when it resolves. */
export function knexTransaction<T>(em: EntityManager, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return em.getKnex().transaction(work);
}
