import type { MikroORM as AnyMikroORM } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { AppConfig } from '../config/app-config';
import { ensureDatabase } from './database-url';
import { LOCK_KEYS } from './lock-keys';
import { buildOrmOptions, OrmModel } from './mikro-orm.options';

/**
 * How long an instance waits for another one's migrations before giving up. Generous, since a
 * migration may rewrite a large table, but finite: a lock held by a stuck session must not keep
 * every new instance from starting, silently, for ever.
 */
const MIGRATION_LOCK_WAIT = '120s';

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so several instances starting at
 * once migrate exactly once and the others wait for the schema to be ready. The lock is a session
 * lock held across the migrations' own transactions, so `databaseUrl` must reach PostgreSQL
 * directly (DATABASE_DIRECT_URL), never through a transaction-pooling PgBouncer.
 */
export async function runMigrations(orm: AnyMikroORM, databaseUrl: string): Promise<void> {
  const lock = new Client({ connectionString: databaseUrl, application_name: 'nft-wallet-migrate' });
  await lock.connect();
  try {
    await lock.query(`SET lock_timeout = '${MIGRATION_LOCK_WAIT}'`);
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [LOCK_KEYS.migrations]);
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') {
        throw new Error(`another instance held the migration lock for ${MIGRATION_LOCK_WAIT}; its migrations may be stuck`);
      }
      throw error;
    }
    await orm.getMigrator().up();
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [LOCK_KEYS.migrations]).catch(() => undefined);
    await lock.end();
  }
}

/**
 * Creates the database when missing and migrates it with an ORM of its own over the direct
 * connection: the service's pool bounds every statement to a few seconds, and a migration may
 * rightly take longer (and may hold a session setting or run DDL a pooler would split up). The
 * extension modules' migrations come in `model` (src/orm-model.ts).
 */
export async function migrateDatabase(
  config: AppConfig,
  model: Pick<OrmModel, 'migrations'>,
  // Where the migrator's progress lines go (MikroORM's default: stdout). The CLI sends them to
  // stderr, so that its stdout stays the one JSON object scripts read.
  log?: (line: string) => void,
): Promise<void> {
  await ensureDatabase(config.databaseDirectUrl);
  const options = buildOrmOptions({ ...config, databaseUrl: config.databaseDirectUrl }, { migrations: model.migrations });
  const orm = await MikroORM.init(log ? { ...options, logger: log } : options);
  try {
    await runMigrations(orm, config.databaseDirectUrl);
  } finally {
    await orm.close(true);
  }
}
