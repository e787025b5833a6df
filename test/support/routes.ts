import { INestApplication, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import type { Access } from '../../src/common/auth/access';
import { ACCESS_METADATA } from '../../src/common/auth/principal';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route of the running application, as its controllers declare it. */
export interface AppRoute {
  method: HttpMethod;
  /** Express form, e.g. `/v1/wallets/:walletId`. */
  path: string;
  params: string[];
  /** Undefined when the route has no access decorator: a test failure. */
  access: Access | undefined;
  handler: string;
}

const joinPath = (...parts: string[]) =>
  `/${parts
    .flatMap((p) => p.split('/'))
    .filter((p) => p.length > 0)
    .join('/')}`;

/** Every controller route of the app, read from Nest's own module graph. */
export function controllerRoutes(app: INestApplication): AppRoute[] {
  const scanner = new MetadataScanner();
  const reflector = new Reflector();
  const routes: AppRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const bases = [Reflect.getMetadata(PATH_METADATA, controller) ?? ''].flat() as string[];
      for (const name of scanner.getAllMethodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, (...args: unknown[]) => unknown>)[name];
        const paths = Reflect.getMetadata(PATH_METADATA, handler);
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] as HttpMethod;
        for (const base of bases) {
          for (const sub of [paths].flat() as string[]) {
            const path = joinPath(base, sub);
            routes.push({
              method,
              path,
              params: [...path.matchAll(/:(\w+)/g)].map((m) => m[1]),
              access: reflector.getAllAndOverride<Access | undefined>(ACCESS_METADATA, [handler, controller]),
              handler: `${controller.name}.${name}`,
            });
          }
        }
      }
    }
  }
  return routes.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

/**
 * The routes Express actually serves, less the catch-all layers middleware registers (they
 * answer every method) and the OpenAPI documentation, which the contract makes public.
 */
export function servedRoutes(app: INestApplication): string[] {
  const express = app.getHttpAdapter().getInstance();
  const stack: { route?: { path: string; methods: Record<string, boolean> } }[] = (express.router ?? express._router).stack;
  return stack
    .filter((layer) => layer.route && Object.keys(layer.route.methods).length < 10 && !/^\/docs(\/|-|$)/.test(layer.route.path))
    .flatMap((layer) => Object.keys(layer.route!.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path}`))
    .sort();
}

/**
 * Percent-encodes the UTF-8 bytes of any string, lone surrogates included (they travel as
 * U+FFFD, as any HTTP client would send them), which encodeURIComponent refuses.
 */
export function percentEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `/v1/wallets/:walletId` with `{walletId: 'x'}` → `/v1/wallets/x` (values are URL-encoded). */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`no value for path parameter ${name} of ${path}`);
    return percentEncode(values[name]);
  });
}

export const describeRoute = (route: AppRoute) => `${route.method} ${route.path}`;
