/**
 * `npm run docs:access`: writes docs/ACCESS.md from the application's route table (the routes and
 * access decorators Nest sees, and the rule the guards apply). `-- --check` only compares and exits
 * 1 when the file is out of date. Needs the database of DATABASE_URL to be reachable (the
 * application's modules connect while they are built), nothing else.
 */
import { NestFactory } from '@nestjs/core';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AppModule } from '../src/app.module';
import { loadConfig } from '../src/config/app-config';
import { ensureDatabase } from '../src/database/database-url';
import { renderAccessMarkdown, routeAccessTable } from '../src/openapi/required-roles';

export const ACCESS_DOC = resolve(__dirname, '../docs/ACCESS.md');

async function main(): Promise<number> {
  const config = loadConfig({ ...process.env, ROLE: 'api', LOG_LEVEL: 'silent', DB_MIGRATE_ON_START: 'false' });
  await ensureDatabase(config.databaseUrl);
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: false, bodyParser: false });
  try {
    const markdown = renderAccessMarkdown(routeAccessTable(app));
    if (process.argv.includes('--check')) {
      const current = readFileSync(ACCESS_DOC, 'utf8');
      if (current === markdown) return 0;
      process.stderr.write('docs/ACCESS.md is out of date: run npm run docs:access\n');
      return 1;
    }
    writeFileSync(ACCESS_DOC, markdown);
    process.stdout.write(`wrote ${ACCESS_DOC}\n`);
    return 0;
  } finally {
    await app.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
