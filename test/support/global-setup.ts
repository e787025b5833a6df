import { MetadataStorage } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { loadConfig } from '../../src/config/app-config';
import { ensureDatabase } from '../../src/database/database-url';
import { runMigrations } from '../../src/database/migrate';
import { buildOrmOptions } from '../../src/database/mikro-orm.options';

/** One fresh database per test run, migrated once; suites isolate themselves by organization. */
export default async function globalSetup(): Promise<void> {
  const base = new URL(process.env.TEST_DATABASE_BASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/nftw_test_${Date.now()}_${process.pid}`;
  const databaseUrl = base.toString();
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_RUN_ID = `${Date.now().toString(36)}${process.pid}`;
  await ensureDatabase(databaseUrl);
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: databaseUrl });
  const orm = await MikroORM.init(buildOrmOptions(config));
  try {
    await runMigrations(orm, databaseUrl);
  } finally {
    await orm.close(true);
    // The suites run in their own module realm and re-register every entity; metadata left in
    // MikroORM's process-wide store from here would mix objects of two realms.
    MetadataStorage.clear();
  }
}
