import { MikroORM } from '@mikro-orm/postgresql';
import { loadConfig } from '../../src/config/app-config';
import { ensureDatabase } from '../../src/database/database-url';
import { dropDatabase } from './database-admin';
import { runMigrations } from '../../src/database/migrate';
import { buildOrmOptions } from '../../src/database/mikro-orm.options';

/**
 * A migrated database of the suite's own, for suites whose operations cover every row (such as
 * re-sealing all secrets) and so must not touch the rows of suites sharing the run's database.
 */
export async function createIsolatedDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set: run the e2e suites through jest (global setup).');
  const url = new URL(base);
  url.pathname = `${url.pathname}_${label}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  const orm = await MikroORM.init({
    ...buildOrmOptions(loadConfig({ DATABASE_URL: databaseUrl, NODE_ENV: 'test' })),
    // The migrator reports each step; a suite's output is no place for it.
    logger: () => undefined,
  });
  try {
    await runMigrations(orm, databaseUrl);
  } finally {
    await orm.close(true);
  }
  return { url: databaseUrl, drop: () => dropDatabase(databaseUrl) };
}

/**
 * An empty database of the suite's own for an upgrade test, which migrates it step by step
 * itself: `open` creates it and returns an ORM on it (the migrator quiet), `drop` removes it.
 */
export function upgradeDatabase(label: string, env: Record<string, string | undefined> = {}) {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set: run the e2e suites through jest (global setup).');
  const url = new URL(base);
  url.pathname = `${url.pathname}_${label}`;
  const databaseUrl = url.toString();
  return {
    url: databaseUrl,
    open: async (): Promise<MikroORM> => {
      await ensureDatabase(databaseUrl);
      return MikroORM.init({
        ...buildOrmOptions(loadConfig({ NODE_ENV: 'test', ...env, DATABASE_URL: databaseUrl })),
        logger: () => undefined,
      });
    },
    drop: () => dropDatabase(databaseUrl),
  };
}
