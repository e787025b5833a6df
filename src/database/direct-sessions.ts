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

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
