/**
 * Operator CLI for bootstrapping without HTTP:
 *   npm run cli -- organization:create --name "Acme" [--roles admin,auditor]
 * prints one JSON object on stdout: {organization, apiKey}; the key has the listed roles
 * (default `admin`).
 */
import { MikroORM, RequestContext } from '@mikro-orm/core';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { loadConfig } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { ensureDatabase } from './database/database-url';
import { DatabaseModule } from './database/database.module';
import { runMigrations } from './database/migrate';
import { OrganizationsModule } from './modules/organizations/organizations.module';
import { OrganizationsService } from './modules/organizations/organizations.service';
import { formatUtc } from './common/time';
import { Role, ROLES } from './common/auth/principal';

const USAGE = `usage: npm run cli -- organization:create --name "Acme" [--roles ${ROLES.join(',')}]`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'organization:create') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const { values } = parseArgs({ args: rest, options: { name: { type: 'string' }, roles: { type: 'string' } }, strict: true });
  const name = values.name?.trim();
  if (!name || name.length > 200) {
    process.stderr.write(`--name is required (1 to 200 characters)\n${USAGE}\n`);
    return 2;
  }
  const roles = (values.roles ?? 'admin').split(',').map((role) => role.trim());
  if (roles.some((role) => !(ROLES as readonly string[]).includes(role))) {
    process.stderr.write(`--roles takes a comma-separated list of ${ROLES.join(', ')}\n${USAGE}\n`);
    return 2;
  }

  const config = loadConfig();
  if (config.migrateOnStart) await ensureDatabase(config.databaseUrl);

  @Module({ imports: [AppConfigModule.forRoot(config), DatabaseModule.forRoot(), OrganizationsModule] })
  class CliModule {}

  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    const orm = app.get(MikroORM);
    if (config.migrateOnStart) await runMigrations(orm, config.databaseUrl);
    const organizations = app.get(OrganizationsService);
    const meta = { requestId: null, ip: null };
    const actor = { kind: 'operator' } as const;
    const result = await RequestContext.create(orm.em, async () => {
      const organization = await organizations.createOrganization(name, actor, meta);
      const { apiKey, key } = await organizations.createApiKey(organization.id, { name: roles.join('+'), roles: roles as Role[] }, actor, meta);
      return {
        organization: { id: organization.id, name: organization.name, createdAtUtc: formatUtc(organization.createdAt) },
        apiKey: { id: apiKey.id, key, roles: apiKey.roles },
      };
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);


