import { MikroORM } from '@mikro-orm/core';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { configureApp } from './configure-app';
import { ensureDatabase } from './database/database-url';
import { runMigrations } from './database/migrate';

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

  if (config.migrateOnStart) await ensureDatabase(config.databaseUrl);
  const app = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, bufferLogs: true });
  configureApp(app, config);
  if (config.migrateOnStart) await runMigrations(app.get(MikroORM), config.databaseUrl);
  await app.listen(config.port);
  app.get(Logger).log(`listening on http://localhost:${config.port} (ROLE=${config.role}); docs at /docs`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
