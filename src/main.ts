import { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { AppConfig, loadConfig } from './config/app-config';
import { ConfigError } from './config/variables';
import type { RunningTracing } from './common/tracing/start-tracing';
import { configureApp } from './configure-app';
import { migrateDatabase } from './database/migrate';
import { ChainIdMismatchError, checkChainIds } from './modules/chain/chain-clients';
import { ormModel } from './orm-model';
import { checkDependencies, checkMediaStorage, checkPortFree, portInUseMessage, StartupError } from './startup-checks';

async function bootstrap(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  await checkPortFree(config.port);
  await checkDependencies(config);
  await checkMediaStorage(config);
  const chainWarnings = await checkChainIds(config).catch((error: unknown) => {
    throw error instanceof ChainIdMismatchError ? new StartupError(error.message) : error;
  });
  if (config.migrateOnStart) await migrateDatabase(config, ormModel());
  // Before the application exists, so every request and job it runs is traced. Imported only
  // when configured: without an endpoint, no OpenTelemetry module is loaded.
  const tracing = config.tracing
    ? await (await import('./common/tracing/start-tracing')).startTracing(config.tracing, config.role, config.operatorApiKey)
    : null;
  const app = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, bufferLogs: true });
  configureApp(app, config);
  for (const warning of chainWarnings) app.get(Logger).warn(warning, 'Bootstrap');
  if (config.relaxedDefaults.length > 0) {
    app
      .get(Logger)
      .warn(
        `NODE_ENV=${config.nodeEnv}: development defaults in force, never run this way in production: ${config.relaxedDefaults.join('; ')}`,
        'Bootstrap',
      );
  }
  await app.listen(config.port).catch((error: unknown) => {
    // Taken between the check at start-up and now: still one line naming the variable.
    if ((error as { code?: string }).code === 'EADDRINUSE') throw new StartupError(portInUseMessage(config.port));
    throw error;
  });
  drainOnSignal(app, config.shutdownGraceMs, tracing);
  app.get(Logger).log(`listening on http://localhost:${config.port} (ROLE=${config.role}); docs at /docs`, 'Bootstrap');
}

/**
 * On SIGTERM or SIGINT: stop accepting connections at once, let requests in flight finish (up
 * to `graceMs`, after which their connections are cut), then close the modules (queue workers
 * finish their job, database and Redis connections close), export the traces still buffered, and
 * exit. Nest's own shutdown hooks run the module hooks before closing the HTTP server, which would
 * close the database under requests still being answered.
 */
function drainOnSignal(app: INestApplication, graceMs: number, tracing: RunningTracing | null): void {
  const server = app.getHttpServer() as Server;
  let draining = false;
  const drain = (signal: NodeJS.Signals) => {
    if (draining) return;
    draining = true;
    const logger = app.get(Logger);
    logger.log(`${signal}: draining requests in flight, then shutting down`, 'Bootstrap');
    // Closing Redis connections rejects commands still queued on them (Bull's blocking reads);
    // nothing is lost by that, so it must not turn a clean stop into a crash with exit code 1.
    process.on('unhandledRejection', (reason: unknown) => logger.warn({ err: reason }, 'a pending operation failed while shutting down'));
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Keep-alive connections between requests would hold close() open: end them as they idle.
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    server.closeIdleConnections();
    const cut = setTimeout(() => {
      logger.warn(`requests still in flight after ${graceMs} ms; closing their connections`, 'Bootstrap');
      server.closeAllConnections();
    }, graceMs);
    closed
      .then(() => {
        clearInterval(idle);
        clearTimeout(cut);
        return app.close();
      })
      // The spans of the last requests and attempts are still buffered: export them before exiting.
      .then(() => tracing?.shutdown().catch(() => undefined))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', drain);
  process.on('SIGINT', drain);
}

bootstrap().catch((error: unknown) => {
  const message =
    error instanceof StartupError
      ? error.message
      : `start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
