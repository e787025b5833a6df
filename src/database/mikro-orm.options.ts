import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { Options } from '@mikro-orm/core';
import { MIGRATIONS } from '../../migrations';
import type { AppConfig } from '../config/app-config';
import { ENTITIES } from './entities';

export function buildOrmOptions(config: Pick<AppConfig, 'databaseUrl' | 'dbPoolMax'>): Options<PostgreSqlDriver> {
  return defineConfig({
    clientUrl: config.databaseUrl,
    entities: ENTITIES,
    forceUtcTimezone: true,
    pool: { min: 0, max: config.dbPoolMax, idleTimeoutMillis: 30_000 },
    driverOptions: { connection: { application_name: 'nft-wallet' } },
    extensions: [Migrator],
    // Migrations are listed in code so the compiled app and the test runner see the same set
    // without globbing .ts or .js files.
    migrations: {
      migrationsList: MIGRATIONS,
      path: 'dist/migrations',
      pathTs: 'migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
    },
    debug: false,
    allowGlobalContext: false,
  });
}
