import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Pool, type PoolClient } from 'pg';
import { AppConfig } from '../config/app-config';

/** Sessions held at once: one per kind of periodic work that takes an advisory lock. */
const MAX_SESSIONS = 4;

/**
 * Connections straight to PostgreSQL (DATABASE_DIRECT_URL) for work bound to one server session
 * for longer than a transaction: session advisory locks held across many transactions. Behind a
 * transaction-pooling PgBouncer the service's pool shares server sessions between transactions,
 * so a session lock taken there would stay with whichever server connection ran it.
 */
@Injectable()
export class DirectSessions implements OnApplicationShutdown {
  private readonly pool: Pool;

  constructor(config: AppConfig) {
    this.pool = new Pool({
      connectionString: config.databaseDirectUrl,
      // Apart from the pool's 'nft-wallet' sessions, which serve requests and can be counted as such.
      application_name: 'nft-wallet-lock',
      max: MAX_SESSIONS,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: config.db.acquireTimeoutMs,
    });
    // An idle session dropped by the server is simply replaced on the next connect().
    this.pool.on('error', () => undefined);
  }

  /** A session of its own; release it, passing the error if the session may be unusable. */
  connect(): Promise<PoolClient> {
    return this.pool.connect();
  }

  /**
   * Runs `work` while holding PostgreSQL advisory lock `key` (one of LOCK_KEYS), if no other
   * session of the deployment holds it; null (and `work` not run) when one does. The lock is a
   * session lock on a session of its own, held for the whole of `work` (which may run any number
   * of transactions, so a transaction-scoped lock would not do); a process that dies releases it
   * with its connection, and a session whose unlock failed is closed, which releases it too. The
   * session is pg's own, not knex's, so its two statements take pg's `$1` placeholders.
   */
  async withAdvisoryLock<T>(key: number, work: () => Promise<T>): Promise<T | null> {
    const session = await this.connect();
    let broken: Error | undefined;
    try {
      const got = await session.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [key]);
      if (!got.rows[0].locked) return null;
      try {
        return await work();
      } finally {
        await session.query('select pg_advisory_unlock($1)', [key]).catch((error: Error) => (broken = error));
      }
    } catch (error) {
      broken ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      session.release(broken);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
