import { Client } from 'pg';
import { createServer } from 'node:net';
import type { AppConfig } from './config/app-config';
import { createRedisConnection } from './common/redis/redis-connection';
import { mediaDirectoryProblem } from './modules/media/media-storage';

/** How long start-up waits for each dependency before saying it cannot reach it. */
const DEPENDENCY_WAIT_MS = 10_000;
const REMEDY = 'see "Getting PostgreSQL and Redis" in README.md';

/** A start-up failure an operator can act on: printed as one line, without a stack trace. */
export class StartupError extends Error {}

/** The address of a connection URL with its password replaced, safe to print. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparseable URL)';
  }
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e?.code ?? e?.message ?? String(error);
}

/**
 * Proves PostgreSQL and Redis answer before the service starts, within a bound, so that a
 * missing dependency stops start-up with one line naming it instead of a hang or a stack trace.
 * PostgreSQL is reached through its maintenance database when the service may create its own.
 */
export async function checkDependencies(config: AppConfig): Promise<void> {
  // The maintenance database is reached directly: a pooler need not know it.
  const database = new URL(config.migrateOnStart ? config.databaseDirectUrl : config.databaseUrl);
  if (config.migrateOnStart) database.pathname = '/postgres';
  const pg = new Client({ connectionString: database.toString(), connectionTimeoutMillis: DEPENDENCY_WAIT_MS });
  pg.on('error', () => undefined);
  try {
    await pg.connect();
    await pg.query('select 1');
  } catch (error) {
    throw new StartupError(
      `PostgreSQL is unreachable at ${redactUrl(config.migrateOnStart ? config.databaseDirectUrl : config.databaseUrl)} (${reason(error)}): ` +
        `start it or set ${config.migrateOnStart && config.databaseDirectUrl !== config.databaseUrl ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL'}; ${REMEDY}`,
    );
  } finally {
    await pg.end().catch(() => undefined);
  }

  const redis = createRedisConnection(config, 'start-up-check', { connectTimeout: DEPENDENCY_WAIT_MS, retryStrategy: () => null });
  // ioredis rejects connect() with "Connection is closed"; the cause arrives as an error event.
  let cause: unknown = null;
  redis.on('error', (error: unknown) => (cause = error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    const where = config.redisClusterNodes
      ? `the Redis Cluster ${config.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(',')} (${reason(cause ?? error)}): start it or set REDIS_CLUSTER_NODES`
      : `${redactUrl(config.redisUrl)} (${reason(cause ?? error)}): start it or set REDIS_URL`;
    throw new StartupError(`Redis is unreachable at ${where}; ${REMEDY}`);
  } finally {
    redis.disconnect();
  }
}

/** MEDIA_STORAGE as a directory: created if missing and writable, or start-up stops with one line naming it. */
export async function checkMediaStorage(config: AppConfig): Promise<void> {
  if (config.media.storage.kind !== 'directory') return;
  const problem = await mediaDirectoryProblem(config.media.storage.path);
  if (problem !== null) throw new StartupError(problem);
}

/** The line start-up stops with when the HTTP port is taken. */
export function portInUseMessage(port: number): string {
  return `port ${port} is already in use by another process (an earlier start still running?): stop that process or set PORT to a free port`;
}

/**
 * Binds the HTTP port for a moment before anything else starts, as the server will (every
 * address), so that a port already taken stops start-up at once with one line naming PORT,
 * rather than after migrations and workers have started.
 */
export async function checkPortFree(port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, resolve);
    });
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE') throw new StartupError(portInUseMessage(port));
    throw new StartupError(`cannot listen on port ${port} (${reason(error)}): set PORT to another port`);
  } finally {
    await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  }
}
