import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { mayCall, ROLES } from '../src/common/auth/principal';
import { renderAccessMarkdown, routeAccessTable } from '../src/openapi/required-roles';
import { controllerRoutes } from './support/routes';
import { createTestApp, TestApp } from './support/test-app';

/** docs/ACCESS.md: the access matrix is published, and what is published is what is enforced. */
describe('published access matrix', () => {
  let t: TestApp;
  let document: { paths: Record<string, Record<string, { 'x-required-roles'?: string[] }>> };

  beforeAll(async () => {
    t = await createTestApp();
    document = (await t.http().get('/docs-json').expect(200)).body;
  });
  afterAll(() => t.close());

  /** Expected from the route's access decorator and the guards' rule, computed here on its own. */
  const expectedRoles = (route: ReturnType<typeof controllerRoutes>[number]) => {
    const access = route.access!;
    if (access.kind === 'public') return [];
    if (access.kind === 'operator') return ['operator'];
    if (access.kind === 'metrics') return ['metrics'];
    return ROLES.filter((role) => mayCall([role], access.role, route.method));
  };

  it('puts x-required-roles on every operation of the OpenAPI document', () => {
    const missing = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => !Array.isArray(op['x-required-roles']))
        .map(([method]) => `${method} ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('lists in x-required-roles exactly the roles the guards let through, for every route', () => {
    const wrong: string[] = [];
    for (const route of controllerRoutes(t.app)) {
      const op = document.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
      if (!op) {
        // Prometheus' scrape endpoint and the portal's static files are left out of the API
        // document on purpose (they are no API operations); the portal stays public, below.
        if (`${route.method} ${route.path}` === 'GET /metrics' || route.path.startsWith('/portal')) continue;
        wrong.push(`${route.method} ${route.path}: not in the document`);
        continue;
      }
      const published = op['x-required-roles'];
      if (JSON.stringify(published) !== JSON.stringify(expectedRoles(route))) {
        wrong.push(
          `${route.method} ${route.path}: published ${JSON.stringify(published)}, enforced ${JSON.stringify(expectedRoles(route))}`,
        );
      }
    }
    expect(wrong).toEqual([]);
    expect(document.paths['/api/organization/v1/current-organization/audit-log/export'].get['x-required-roles']).toEqual([
      'admin',
      'auditor',
    ]);
  });

  it('docs/ACCESS.md is the table the code produces (run `npm run docs:access` after changing a route)', () => {
    const onDisk = readFileSync(resolve(__dirname, '../docs/ACCESS.md'), 'utf8');
    expect(onDisk).toBe(renderAccessMarkdown(routeAccessTable(t.app)));
    // One row per route, each route once.
    for (const route of controllerRoutes(t.app)) {
      expect(onDisk).toContain(`| ${route.method} | \`${route.path}\` |`);
    }
  });
});
