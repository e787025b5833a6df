/**
 * Writes the OpenAPI document the built service serves at /docs-json to a file:
 *
 *   npm run build && npx ts-node --swc scripts/openapi-document.ts <out.json>
 *
 * The document comes from the built application in dist/ (what `npm start` runs, with the Nest
 * Swagger compiler plugin's additions), booted as ROLE=api; PostgreSQL must be reachable at
 * DATABASE_URL. Used by `npm run lint:openapi` and the OpenAPI conformance test.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const BUILT = resolve(__dirname, '..', 'dist', 'src');

/**
 * The environment for a document that does not depend on where it was written: the webhooks
 * section then states the default retry schedule and timeout, not this machine's settings, so
 * the typed client generated from it is the same everywhere.
 */
export function portableDocumentEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { WEBHOOK_RETRY_SCHEDULE: _schedule, WEBHOOK_TIMEOUT_MS: _timeout, ...rest } = env;
  return rest;
}

export async function writeBuiltOpenApiDocument(path: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (!existsSync(join(BUILT, 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first.');
  // Loaded from dist at run time so that the compiled, plugin-enhanced classes describe the API;
  // dist/ is compiled from src/, so the sources' types describe the modules.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { AppModule } = require(join(BUILT, 'app.module')) as typeof import('../src/app.module');
  const { loadConfig } = require(join(BUILT, 'config', 'app-config')) as typeof import('../src/config/app-config');
  const { buildOpenApiDocument, configureApp } = require(join(BUILT, 'configure-app')) as typeof import('../src/configure-app');
  const { ensureDatabase } = require(join(BUILT, 'database', 'database-url')) as typeof import('../src/database/database-url');
  /* eslint-enable @typescript-eslint/no-require-imports */

  // The API role: no worker loops, nothing sent; no migrations are needed to describe the API.
  const config = loadConfig({ ...env, ROLE: 'api', DB_MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn' });
  await ensureDatabase(config.databaseUrl);
  const app: INestApplication = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, logger: false });
  try {
    configureApp(app, config);
    await app.init();
    writeFileSync(path, JSON.stringify(buildOpenApiDocument(app), null, 2));
  } finally {
    await app.close();
  }
}

if (require.main === module) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write('usage: ts-node --swc scripts/openapi-document.ts <out.json>\n');
    process.exit(2);
  }
  writeBuiltOpenApiDocument(resolve(out)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
