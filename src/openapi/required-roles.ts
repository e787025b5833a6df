import { INestApplicationContext, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { THROTTLER_SKIP } from '@nestjs/throttler/dist/throttler.constants';
import type { Access } from '../common/auth/access';
import { UuidPipe } from '../common/http/uuid-param';
import { ACCESS_METADATA, ROLES, rolesAccepted } from '../common/auth/principal';

/**
 * The published access matrix: `x-required-roles` on every OpenAPI
 * operation and the table of docs/ACCESS.md, both read from the same route metadata and the same
 * rule (`rolesAccepted`) the guards enforce.
 */

/** What `x-required-roles` lists besides API-key roles. */
export const OPERATOR = 'operator';
/** The Prometheus scrape's own credential (METRICS_TOKEN, or its METRICS_PORT listener). */
export const METRICS = 'metrics';

export interface RouteAccess {
  method: string;
  /** Express form, e.g. `/v1/wallets/:walletId`. */
  path: string;
  /** Undefined when a route carries no access decorator (the authorization matrix test fails on it). */
  access: Access | undefined;
  /** Any one of these opens the route; empty for a public route. */
  requiredRoles: string[];
  /** False where @SkipThrottle() exempts the route from the rate limit (the probes). */
  rateLimited: boolean;
  /** Path parameters that must be UUIDs (`UuidParam`): anything else is a 400. */
  uuidParams: string[];
}

/** The roles that open a route: an API key holding one of them, or the operator key. */
export function requiredRoles(access: Access | undefined, method: string): string[] {
  if (!access || access.kind === 'public') return [];
  if (access.kind === 'operator') return [OPERATOR];
  if (access.kind === 'metrics') return [METRICS];
  return rolesAccepted(access.role, method);
}

const joinPath = (...parts: string[]) =>
  `/${parts
    .flatMap((p) => p.split('/'))
    .filter((p) => p.length > 0)
    .join('/')}`;

/** Every controller route of the application, from Nest's own module graph, in a stable order. */
export function routeAccessTable(app: INestApplicationContext): RouteAccess[] {
  const scanner = new MetadataScanner();
  const reflector = new Reflector();
  const routes: RouteAccess[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const bases = [Reflect.getMetadata(PATH_METADATA, controller) ?? ''].flat() as string[];
      const prototype = controller.prototype as Record<string, (...args: unknown[]) => unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        const paths: unknown = Reflect.getMetadata(PATH_METADATA, handler);
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const access = reflector.getAllAndOverride<Access | undefined>(ACCESS_METADATA, [handler, controller]);
        // The rate limit has one throttler, `default` (RateLimitModule).
        const rateLimited = reflector.getAllAndOverride<boolean | undefined>(`${THROTTLER_SKIP}default`, [handler, controller]) !== true;
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, { pipes?: unknown[] }>;
        const uuidParams = Object.values(args).flatMap((arg) =>
          (arg.pipes ?? []).filter((pipe): pipe is UuidPipe => pipe instanceof UuidPipe).map((pipe) => pipe.name),
        );
        for (const base of bases) {
          for (const sub of [paths].flat() as string[]) {
            const path = joinPath(base, sub);
            routes.push({ method, path, access, requiredRoles: requiredRoles(access, method), rateLimited, uuidParams });
          }
        }
      }
    }
  }
  return routes.sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path < b.path ? -1 : 1));
}

export const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** Adds `x-required-roles` to every operation of the document (in place; returns it). */
export function addRequiredRoles(app: INestApplicationContext, document: OpenAPIObject): OpenAPIObject {
  const byOperation = new Map(routeAccessTable(app).map((r) => [`${r.method.toLowerCase()} ${toOpenApiPath(r.path)}`, r]));
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      const route = byOperation.get(`${method} ${path}`);
      (operation as Record<string, unknown>)['x-required-roles'] = route ? route.requiredRoles : [];
    }
  }
  return document;
}

/** docs/ACCESS.md, generated from the route table (`npm run docs:access`). */
export function renderAccessMarkdown(routes: readonly RouteAccess[]): string {
  const columns = ['anyone', ...ROLES, OPERATOR, METRICS];
  const cell = (route: RouteAccess, column: string) => {
    if (column === 'anyone') return route.access?.kind === 'public' ? '✓' : '';
    return route.requiredRoles.includes(column) ? '✓' : '';
  };
  const lines = [
    '# Access matrix',
    '',
    '<!-- Generated by `npm run docs:access` from the route table; test/access-matrix.e2e-spec.ts fails when it drifts. Do not edit. -->',
    '',
    'Which credential opens each route. A ✓ under a role means an API key holding that role (any one',
    'of the marked roles is enough); `operator` is the platform operator key (`OPERATOR_API_KEY`);',
    '`anyone` needs no credential. `admin` implies `read`, `write` and `auditor`; an `auditor` may call',
    'every GET under `/api/organization/v1/current-organization/` and nothing that changes anything.',
    'The same lists appear as `x-required-roles` on every operation of the OpenAPI document (`/docs-json`).',
    '`metrics` is the Prometheus scrape: `Authorization: Bearer <METRICS_TOKEN>` when that is set; with `METRICS_PORT`',
    'set it is served without a token on that port only (bound to `METRICS_HOST`, default 127.0.0.1) and not here;',
    'with neither it is open, which only development allows (production requires one of the two).',
    '',
    `| method | path | ${columns.join(' | ')} |`,
    `|---|---|${columns.map(() => ':---:').join('|')}|`,
    ...routes.map((r) => `| ${r.method} | \`${r.path}\` | ${columns.map((c) => cell(r, c)).join(' | ')} |`),
    '',
  ];
  return lines.join('\n');
}
