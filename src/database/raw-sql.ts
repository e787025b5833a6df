import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs one statement with bound parameters on the EntityManager's current transaction (or the
 * pool outside one). Unlike `em.execute`, values are sent as protocol parameters rather than
 * inlined into the SQL text, and arrays stay PostgreSQL arrays (`= any(?::uuid[])`, `unnest`),
 * which is what set-based statements over a whole batch need.
 */
export async function queryRows<T = Record<string, unknown>>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  const knex: Knex = em.getTransactionContext<Knex.Transaction>() ?? em.getKnex();
  const result = await knex.raw<{ rows: T[] }>(sql, params as Knex.RawBinding[]);
  return result.rows;
}

/** What `knex.raw` resolves to on PostgreSQL (pg's result), typed by the caller's row shape. */
export interface PgResult<T> {
  rows: T[];
  rowCount: number | null;
}
