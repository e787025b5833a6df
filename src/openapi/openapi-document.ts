import type { OpenAPIObject } from '@nestjs/swagger';
import type { AppConfig } from '../config/app-config';
import { describeProblemAnswers } from './problem-examples';
import { toOpenApiPath, type RouteAccess } from './required-roles';
import { toOpenApi31Nullability } from '../common/openapi-nullability';
import { describeWebhooks } from './webhooks-openapi';

/**
 * Finishes the document Nest's scanner produced so that it is a valid OpenAPI 3.1 document that
 * Redocly lints without errors: 3.1 null types, a server, a licence, explicit security on public
 * operations, and the `webhooks` section this service sends. Kept apart from configure-app.ts so
 * further document-wide additions (e.g. per-operation extensions) have one place to go.
 */
export function completeOpenApiDocument(
  document: OpenAPIObject,
  config: Pick<AppConfig, 'webhook'>,
  routes: readonly RouteAccess[] = [],
): OpenAPIObject {
  document.openapi = '3.1.0';
  document.info.license ??= { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } as OpenAPIObject['info']['license'];
  // Relative to wherever the document is served from, so "try it out" targets this deployment.
  if (!document.servers || document.servers.length === 0) document.servers = [{ url: '/', description: 'This deployment' }];
  markPublicOperations(document);
  const byOperation = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${toOpenApiPath(r.path)}`, r]));
  describeUuidParameters(document, byOperation);
  describeProblemAnswers(document, (method, path) => ({ rateLimited: byOperation.get(`${method} ${path}`)?.rateLimited ?? true }));
  describeWebhooks(document, config.webhook);
  orderTags(document);
  return toOpenApi31Nullability(document);
}

/**
 * The order readers meet the tags in (Swagger UI and Redoc follow the document's tag list): what
 * an integrator calls first, then webhooks, organization administration, and the operator's and
 * probes' routes last. A tag not listed here goes before those last two.
 */
export const TAG_ORDER = [
  'Wallets',
  'Tokens',
  'Transactions',
  'Media',
  'NFT whitelist',
  'Webhook configuration',
  'Webhook endpoints',
  'Webhooks',
  'API keys',
  'Audit log',
  'Operator',
  'Operations',
] as const;

/** Every tag an operation uses, in TAG_ORDER, each with the description already given to it. */
function orderTags(document: OpenAPIObject): void {
  const used = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) for (const tag of item[method]?.tags ?? []) used.add(tag);
  }
  for (const tag of document.tags ?? []) used.add(tag.name);
  const described = new Map((document.tags ?? []).map((tag) => [tag.name, tag]));
  const unlisted = TAG_ORDER.indexOf('Operator');
  const rank = (name: string) => {
    const index = (TAG_ORDER as readonly string[]).indexOf(name);
    return index === -1 ? unlisted - 0.5 : index;
  };
  document.tags = [...used].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).map((name) => described.get(name) ?? { name });
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Path ids the service refuses unless they are UUIDs say so, so clients and proxies check them too. */
function describeUuidParameters(document: OpenAPIObject, routes: ReadonlyMap<string, RouteAccess>): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const uuids = routes.get(`${method} ${path}`)?.uuidParams ?? [];
      for (const parameter of item[method]?.parameters ?? []) {
        if ('$ref' in parameter || parameter.in !== 'path' || !uuids.includes(parameter.name)) continue;
        parameter.schema = { type: 'string', format: 'uuid' };
      }
    }
  }
}

/**
 * Operations with no security requirement of their own (health probes) are public: an explicit
 * empty list says so, instead of leaving readers to guess.
 */
function markPublicOperations(document: OpenAPIObject): void {
  if (document.security && document.security.length > 0) return;
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation && operation.security === undefined) operation.security = [];
    }
  }
}

const OPERATION_ID = /^[a-z][a-zA-Z0-9]*$/;

/**
 * What keeps the document's operationIds from naming SDK methods: a missing, duplicated or
 * non-camelCase id, such as Nest's default `WalletsController_create`. Every route sets its own
 * with `@ApiOperation({ operationId })`; the OpenAPI e2e test requires this list to be empty.
 */
export function operationIdProblems(document: OpenAPIObject): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const id = operation.operationId;
      if (!id) problems.push(`${where}: no operationId`);
      else if (!OPERATION_ID.test(id)) problems.push(`${where}: operationId ${id} is not camelCase`);
      else if (seen.has(id)) problems.push(`${where}: operationId ${id} is also ${seen.get(id)}'s`);
      if (id) seen.set(id, seen.get(id) ?? where);
      if (!operation.tags || operation.tags.length === 0) problems.push(`${where}: no tag`);
    }
  }
  return problems;
}
