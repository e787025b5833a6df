import type { EntityManager } from '@mikro-orm/postgresql';

/** The part of knex's client used here: taking a pooled connection for itself. */
interface PoolClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<void>;
}

/**
 * Runs `work` while holding PostgreSQL advisory lock `key`, if no other session of the
 * deployment holds it; null (and `work` not run) when one does. The lock is a session lock on a
 * connection of its own, held for the whole of `work` (which may run any number of
 * transactions); a process that dies releases it with its connection. Each kind of work has its
 * own fixed key, shared by every process of the deployment.
 */
export async function withAdvisoryLock<T>(em: EntityManager, key: number, work: () => Promise<T>): Promise<T | null> {
  const knex = em.getKnex();
  const pool = knex.client as PoolClient;
  const connection = await pool.acquireConnection();
  try {
    const got = await knex.raw<{ rows: { locked: boolean }[] }>('select pg_try_advisory_lock(?) as locked', [key]).connection(connection);
    if (!got.rows[0].locked) return null;
    try {
      return await work();
    } finally {
      await knex
        .raw('select pg_advisory_unlock(?)', [key])
        .connection(connection)
        .catch(() => undefined);
    }
  } finally {
    await pool.releaseConnection(connection);
  }
}
