import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { EntityClass, MigrationObject, Options } from '@mikro-orm/core';
import type { Client } from 'pg';
import { MIGRATIONS } from '../../migrations';
import { AppConfig, servesApi } from '../config/app-config';
import { boundStatements } from './statement-bounds';

/**
 * What the ORM maps, and the migrations it applies after the built-in ones: given by the
 * application (src/orm-model.ts), which knows its modules and extensions; this folder does not.
 * A migration-only ORM needs no entities.
 */
export interface OrmModel {
  entities?: readonly EntityClass<object>[];
  migrations?: readonly MigrationObject[];
}

/**
 * How long a caller may wait on PostgreSQL. Absent for migrations, the CLI and tooling, which may
 * legitimately run long; the service itself always has both.
 */
export interface DatabaseBounds {
  /** Waiting for a pooled connection (knex's default is a minute). */
  acquireTimeoutMs: number;
  /** Any one statement, lock waits included; the server cancels it (SQLSTATE 57014). */
  statementTimeoutMs: number;
}

/** The bounds of a service process: the delivery worker's statements get their own. */
export function serviceBounds(config: Pick<AppConfig, 'role' | 'db'>): DatabaseBounds {
  return {
    acquireTimeoutMs: config.db.acquireTimeoutMs,
    // ROLE=all serves API requests from the same pool, so the API's bound holds there too.
    statementTimeoutMs: servesApi(config) ? config.db.statementTimeoutMs : config.db.workerStatementTimeoutMs,
  };
}

export function buildOrmOptions(
  config: Pick<AppConfig, 'databaseUrl' | 'dbPoolMax'>,
  model: OrmModel = {},
  bounds?: DatabaseBounds,
): Options<PostgreSqlDriver> {
  // Only start-up parameters PgBouncer accepts by default: it refuses statement_timeout and the
  // like, so the bounds travel with the statements instead (boundStatements).
  const connection: Record<string, unknown> = { application_name: 'nft-wallet' };
  if (bounds) connection.connectionTimeoutMillis = bounds.acquireTimeoutMs;
  const statementBounds = bounds && {
    statementTimeoutMs: bounds.statementTimeoutMs,
    // A transaction left open by a crashed code path must not hold its locks for ever.
    idleInTransactionTimeoutMs: Math.max(10_000, 2 * bounds.statementTimeoutMs),
  };
  return defineConfig({
    clientUrl: config.databaseUrl,
    entities: [...(model.entities ?? [])],
    // Running migrations needs no entity.
    discovery: { warnWhenNoEntities: false },
    forceUtcTimezone: true,
    pool: {
      min: 0,
      max: config.dbPoolMax,
      idleTimeoutMillis: 30_000,
      ...(bounds ? { acquireTimeoutMillis: bounds.acquireTimeoutMs, createTimeoutMillis: bounds.acquireTimeoutMs } : {}),
      // Once per pooled connection: from then on its statements carry the bounds themselves.
      ...(statementBounds
        ? {
            afterCreate: (client: Client, done: (error: Error | null, client: Client) => void) => {
              boundStatements(client, statementBounds);
              done(null, client);
            },
          }
        : {}),
    },
    driverOptions: {
      connection,
      ...(bounds ? { acquireConnectionTimeout: bounds.acquireTimeoutMs } : {}),
    },
    extensions: [Migrator],
    // Migrations are listed in code so the compiled app and the test runner see the same set
    // without globbing .ts or .js files.
    migrations: {
      migrationsList: [...MIGRATIONS, ...(model.migrations ?? [])],
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
