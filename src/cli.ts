/**
 * Operator CLI:
 *   npm run cli -- organization:create --name "Acme" [--roles admin,auditor]
 *     prints one JSON object on stdout: {organization, apiKey}; the key has the listed roles
 *     (default `admin`).
 *   npm run cli -- apikey:create --organization <organizationId> [--roles auditor] [--name "audit"]
 *     a further key for an organization that exists; prints {organizationId, apiKey}.
 *   npm run cli -- secrets:reseal [--batch-size 500]
 *     re-seals every stored secret with the current encryption key (the first of
 *     SECRETS_ENCRYPTION_KEYS), so older keys can then be removed; prints {columns: [...]}.
 *     Safe while the service runs and resumable: run it again after an interruption.
 */
import { MikroORM, RequestContext } from '@mikro-orm/core';
import { Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { AppConfig, loadConfig } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { migrateDatabase } from './database/migrate';
import type { ResealReport, SealedSecretOwner } from './database/sealed-columns';
import { WebhookEndpointsModule } from './modules/webhook-endpoints/webhook-endpoints.module';
import { WebhookEndpointsService } from './modules/webhook-endpoints/webhook-endpoints.service';
import { OrganizationsModule } from './modules/organizations/organizations.module';
import { OrganizationsService } from './modules/organizations/organizations.service';
import { formatUtc } from './common/time';
import { DomainError } from './common/errors/domain-error';
import { ormModel } from './orm-model';
import { Role, ROLES } from './common/auth/principal';

const USAGE = `usage: npm run cli -- organization:create --name "Acme" [--roles ${ROLES.join(',')}]
       npm run cli -- apikey:create --organization <organizationId> --roles auditor [--name "audit"]
       npm run cli -- secrets:reseal [--batch-size 500]`;

/**
 * The modules owning sealed secrets, each exporting its reseal routine: a new owner is one more
 * entry (its module and its service).
 */
const SEALED_SECRET_OWNERS: ReadonlyArray<{ module: Type; service: Type<SealedSecretOwner> }> = [
  { module: WebhookEndpointsModule, service: WebhookEndpointsService },
];

/** A command: its arguments read (or the line saying what is wrong with them), then its run. */
interface Command<A> {
  parse(args: string[]): A | string;
  run(args: A, config: AppConfig): Promise<number>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `--roles` read into roles (default `admin`), or the line saying what is wrong with it. */
function parseRoles(raw: string | undefined): Role[] | string {
  const roles = (raw ?? 'admin').split(',').map((role) => role.trim());
  if (roles.some((role) => !(ROLES as readonly string[]).includes(role)))
    return `--roles takes a comma-separated list of ${ROLES.join(', ')}`;
  return roles as Role[];
}

/** Runs `work` with the organizations service, the database migrated first when the service would. */
async function withOrganizations<T>(
  config: AppConfig,
  work: (organizations: OrganizationsService, actor: { kind: 'operator' }, meta: { requestId: null; ip: null }) => Promise<T>,
): Promise<T> {
  if (config.migrateOnStart) await migrateDatabase(config, ormModel(), (line) => process.stderr.write(`${line}\n`));

  @Module({ imports: [AppConfigModule.forRoot(config), DatabaseModule.forRoot({ model: ormModel }), OrganizationsModule] })
  class CliModule {}

  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    const orm = app.get(MikroORM);
    const organizations = app.get(OrganizationsService);
    return await RequestContext.create(orm.em, () => work(organizations, { kind: 'operator' }, { requestId: null, ip: null }));
  } finally {
    await app.close();
  }
}

const createOrganization: Command<{ name: string; roles: Role[] }> = {
  parse(args) {
    const { values } = parseArgs({ args, options: { name: { type: 'string' }, roles: { type: 'string' } }, strict: true });
    const name = values.name?.trim();
    if (!name || name.length > 200) return '--name is required (1 to 200 characters)';
    const roles = parseRoles(values.roles);
    return typeof roles === 'string' ? roles : { name, roles };
  },
  async run({ name, roles }, config) {
    const result = await withOrganizations(config, async (organizations, actor, meta) => {
      const organization = await organizations.createOrganization(name, actor, meta);
      const { apiKey, key } = await organizations.createApiKey(organization.id, { name: roles.join('+'), roles }, actor, meta);
      return {
        organization: { id: organization.id, name: organization.name, createdAtUtc: formatUtc(organization.createdAt) },
        apiKey: { id: apiKey.id, key, roles: apiKey.roles },
      };
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  },
};

const createApiKey: Command<{ organizationId: string; name: string; roles: Role[] }> = {
  parse(args) {
    const { values } = parseArgs({
      args,
      options: { organization: { type: 'string' }, name: { type: 'string' }, roles: { type: 'string' } },
      strict: true,
    });
    const organizationId = values.organization?.trim();
    if (!organizationId || !UUID.test(organizationId)) return '--organization is required: the id of an existing organization (a UUID)';
    const roles = parseRoles(values.roles);
    if (typeof roles === 'string') return roles;
    const name = values.name?.trim() || roles.join('+');
    if (name.length > 200) return '--name takes 1 to 200 characters';
    return { organizationId: organizationId.toLowerCase(), name, roles };
  },
  async run({ organizationId, name, roles }, config) {
    const result = await withOrganizations(config, async (organizations, actor, meta) => {
      const { apiKey, key } = await organizations.createApiKey(organizationId, { name, roles }, actor, meta);
      return { organizationId, apiKey: { id: apiKey.id, key, roles: apiKey.roles } };
    }).catch((error: unknown) => {
      // The organization missing or its keys at their cap: the service's own sentence, not a stack trace.
      if (error instanceof DomainError) return error;
      throw error;
    });
    if (result instanceof DomainError) {
      process.stderr.write(`${result.code}: ${result.detail}\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  },
};

const resealSecrets: Command<{ batchSize: number }> = {
  parse(args) {
    const { values } = parseArgs({ args, options: { 'batch-size': { type: 'string' } }, strict: true });
    const batchSize = values['batch-size'] === undefined ? 500 : Number(values['batch-size']);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) return '--batch-size must be an integer between 1 and 10000';
    return { batchSize };
  },
  async run({ batchSize }, config) {
    @Module({
      imports: [AppConfigModule.forRoot(config), DatabaseModule.forRoot({ model: ormModel }), ...SEALED_SECRET_OWNERS.map((o) => o.module)],
    })
    class ResealModule {}

    const app = await NestFactory.createApplicationContext(ResealModule, { logger: ['error'] });
    try {
      const columns: ResealReport[] = [];
      for (const owner of SEALED_SECRET_OWNERS) columns.push(...(await app.get(owner.service).resealSecrets(batchSize)));
      process.stdout.write(`${JSON.stringify({ keyId: config.secretsEncryptionKey.sealing.id, columns })}\n`);
      const unopenable = columns.reduce((sum, c) => sum + c.unopenable, 0);
      if (unopenable > 0) {
        process.stderr.write(`${unopenable} sealed value(s) open under no configured key and were left as they are\n`);
        return 1;
      }
      return 0;
    } finally {
      await app.close();
    }
  },
};

/** Reads the configuration only once the arguments are known to be good: a usage error needs none. */
async function execute<A>(command: Command<A>, args: string[]): Promise<number> {
  const parsed = command.parse(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`${parsed}\n${USAGE}\n`);
    return 2;
  }
  return command.run(parsed, loadConfig());
}

function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'organization:create') return execute(createOrganization, rest);
  if (name === 'apikey:create') return execute(createApiKey, rest);
  if (name === 'secrets:reseal') return execute(resealSecrets, rest);
  process.stderr.write(`${USAGE}\n`);
  return Promise.resolve(2);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
