import type { MikroORM } from '@mikro-orm/core';
import { Client } from 'pg';

/** Any fixed number: every instance of the service takes the same lock before migrating. */
const MIGRATION_LOCK = 7_341_002;

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so several instances starting at
 * once migrate exactly once and the others wait for the schema to be ready.
 */
export async function runMigrations(orm: MikroORM, databaseUrl: string): Promise<void> {
  const lock = new Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await orm.getMigrator().up();
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}
