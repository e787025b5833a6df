import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { configureApp } from './configure-app';
import { migrateDatabase } from './database/migrate';
import { checkDependencies, StartupError } from './startup-checks';

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

  await checkDependencies(config);
  if (config.migrateOnStart) await migrateDatabase(config);
  const app = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, bufferLogs: true });
  configureApp(app, config);
  if (config.relaxedDefaults.length > 0) {
    app
      .get(Logger)
      .warn(
        `NODE_ENV=${config.nodeEnv}: development defaults in force, never run this way in production: ${config.relaxedDefaults.join('; ')}`,
        'Bootstrap',
      );
  }
  await app.listen(config.port);
  app.get(Logger).log(`listening on http://localhost:${config.port} (ROLE=${config.role}); docs at /docs`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  const message =
    error instanceof StartupError
      ? error.message
      : `start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
