/**
 * Lints the OpenAPI document the service serves at /docs-json with Redocly (recommended rules;
 * any error fails the run, warnings are shown):
 *
 *   npm run lint:openapi            (builds first; PostgreSQL must be reachable at DATABASE_URL)
 *
 * The document comes from the built application in dist/ (what `npm start` runs, with the Nest
 * Swagger compiler plugin's additions), booted as ROLE=api, written to a temporary file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const BUILT = resolve(__dirname, '..', 'dist', 'src');

async function main(): Promise<void> {
  if (!existsSync(join(BUILT, 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm run lint:openapi does).');
  // Loaded from dist at run time so that the compiled, plugin-enhanced classes describe the API;
  // dist/ is compiled from src/, so the sources' types describe the modules.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { AppModule } = require(join(BUILT, 'app.module')) as typeof import('../src/app.module');
  const { loadConfig } = require(join(BUILT, 'config', 'app-config')) as typeof import('../src/config/app-config');
  const { buildOpenApiDocument, configureApp } = require(join(BUILT, 'configure-app')) as typeof import('../src/configure-app');
  const { ensureDatabase } = require(join(BUILT, 'database', 'database-url')) as typeof import('../src/database/database-url');
  /* eslint-enable @typescript-eslint/no-require-imports */

  // The API role: no worker loops, nothing sent; no migrations are needed to describe the API.
  const config = loadConfig({ ...process.env, ROLE: 'api', DB_MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn' });
  await ensureDatabase(config.databaseUrl);
  const app: INestApplication = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, logger: false });
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const path = join(dir, 'openapi.json');
  try {
    configureApp(app, config);
    await app.init();
    writeFileSync(path, JSON.stringify(buildOpenApiDocument(app), null, 2));
  } finally {
    await app.close();
  }
  try {
    execFileSync(process.execPath, [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--format=codeframe', path], { stdio: 'inherit' });
  } catch {
    process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
