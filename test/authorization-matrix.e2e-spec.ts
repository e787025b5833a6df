import type { Access } from '../src/common/auth/access';
import { mayCall, Role } from '../src/common/auth/principal';
import { FIXTURE_CHAIN_ENV, OrgFixture, createOrgFixture, restoreIndexedContract, sampleBody } from './support/org-fixture';
import { TestReceiver } from './support/receiver';
import { AppRoute, controllerRoutes, describeRoute, fillPath, servedRoutes } from './support/routes';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

/**
 * Every route of the running app, called by every kind of caller. The route list comes from the
 * application itself, so a new route is covered (or, without an access decorator, fails) with no
 * change here.
 */
type Caller =
  | { name: 'no key' }
  | { name: 'revoked key' }
  | { name: 'operator key' }
  | { name: 'read key' | 'write key' | 'admin key' | 'auditor key'; roles: Role[] }
  | { name: "another organization's admin key"; roles: Role[] };

type Expected = { kind: 'status'; status: 401 | 403 | 404 } | { kind: 'allowed' };

function expectedFor(access: Access, route: AppRoute, caller: Caller): Expected {
  // The test app sets neither METRICS_TOKEN nor METRICS_PORT: the scrape is open, as in development.
  if (access.kind === 'public' || access.kind === 'metrics') return { kind: 'allowed' };
  if (access.kind === 'operator') return caller.name === 'operator key' ? { kind: 'allowed' } : { kind: 'status', status: 401 };
  if (!('roles' in caller)) return { kind: 'status', status: 401 };
  if (!mayCall(caller.roles, access.role, route.method)) return { kind: 'status', status: 403 };
  // Another organization's objects do not exist for this key (a spam override's path names a chain contract, anyone's).
  if (caller.name === "another organization's admin key" && route.params.length > 0 && !NAMES_NO_OBJECT.has(describeRoute(route))) {
    return { kind: 'status', status: 404 };
  }
  return { kind: 'allowed' };
}

/** Routes whose path parameters name no organization's object: another organization may call them as its own. */
const NAMES_NO_OBJECT = new Set(['PUT /api/organization/v1/current-organization/spam-overrides/:chainId/:contractAddress']);

const CODES: Record<number, string[]> = { 401: ['UNAUTHENTICATED', 'INVALID_API_KEY'], 403: ['FORBIDDEN'] };

/** An answer that proves the access check was passed, where the fixture's objects cannot avoid it. */
const PAST_ACCESS: Record<string, { status: number; code: string }> = {
  // The matrix's app follows no chain, so a wallet sync names an unknown one.
  'POST /v1/wallets/:walletId/sync': { status: 422, code: 'UNKNOWN_CHAIN' },
  // A thumbnail link's signature is its only credential, the same for every caller: without one
  // (the matrix sends the path alone) it is refused whatever key comes with it.
  'GET /v1/media/:sha256/:file': { status: 403, code: 'MEDIA_LINK_INVALID' },
  // The matrix's app follows no chain: an override names an unknown one, and so none exists to delete.
  'PUT /api/organization/v1/current-organization/spam-overrides/:chainId/:contractAddress': { status: 422, code: 'UNKNOWN_CHAIN' },
  'DELETE /api/organization/v1/current-organization/spam-overrides/:chainId/:contractAddress': {
    status: 404,
    code: 'SPAM_OVERRIDE_NOT_FOUND',
  },
};

describe('authorization matrix over every route', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let own: OrgFixture;
  let other: OrgFixture;
  let routes: AppRoute[];

  beforeAll(async () => {
    t = await createTestApp(FIXTURE_CHAIN_ENV);
    receiver = await new TestReceiver().start();
    own = await createOrgFixture(t, receiver);
    other = await createOrgFixture(t, receiver);
    routes = controllerRoutes(t.app);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('reads the whole route table, and every route carries an access decorator', () => {
    const table = routes.map((r) => `${r.method} ${r.path}`).sort();
    // Nothing is served outside the controllers the matrix walks.
    expect(servedRoutes(t.app)).toEqual(table);
    expect(routes.length).toBeGreaterThanOrEqual(25);
    expect(routes.filter((r) => r.access === undefined).map(describeRoute)).toEqual([]);
    expect(new Set(routes.map((r) => r.access?.kind))).toEqual(new Set(['public', 'operator', 'apiKey', 'metrics']));
  });

  it("gives auditors every GET of the organization's administration and nothing that changes anything", () => {
    const adminArea = routes.filter((r) => r.path.startsWith('/api/organization/v1/current-organization/'));
    expect(adminArea.length).toBeGreaterThan(5);
    const wrong = adminArea
      .filter((r) => r.access?.kind !== 'apiKey' || mayCall(['auditor'], r.access.role, r.method) !== (r.method === 'GET'))
      .map(describeRoute);
    expect(wrong).toEqual([]);
    // Verify and export are among them.
    expect(adminArea.map(describeRoute)).toEqual(
      expect.arrayContaining([
        'GET /api/organization/v1/current-organization/audit-log/verify',
        'GET /api/organization/v1/current-organization/audit-log/export',
      ]),
    );
  });

  it('has a real object of this organization for every path parameter', () => {
    const missing = routes.flatMap((r) => r.params.filter((p) => !(p in own.params)).map((p) => `${describeRoute(r)}: ${p}`));
    expect(missing).toEqual([]);
  });

  const callers: [string, () => { caller: Caller; key: string | null }][] = [
    ['no key', () => ({ caller: { name: 'no key' }, key: null })],
    ['a revoked key', () => ({ caller: { name: 'revoked key' }, key: own.keys.revoked })],
    ['a read key', () => ({ caller: { name: 'read key', roles: ['read'] }, key: own.keys.read })],
    ['a write key', () => ({ caller: { name: 'write key', roles: ['write'] }, key: own.keys.write })],
    ['an auditor key', () => ({ caller: { name: 'auditor key', roles: ['auditor'] }, key: own.keys.auditor })],
    // Before the organization's own admin key, whose deletions would otherwise make a 404 trivial.
    [
      "another organization's admin key",
      () => ({ caller: { name: "another organization's admin key", roles: ['admin'] }, key: other.keys.admin }),
    ],
    ['an admin key', () => ({ caller: { name: 'admin key', roles: ['admin'] }, key: own.keys.admin })],
    ['the operator key', () => ({ caller: { name: 'operator key' }, key: OPERATOR_KEY })],
  ];

  it.each(callers)('with %s, every route answers as its access level says', async (_, make) => {
    const { caller, key } = make();
    const wrong: string[] = [];
    await restoreIndexedContract(t, own);
    const ownIds = Object.values(own.params);
    // Deletions last, so that the other routes still find the objects they address.
    const ordered = [...routes.filter((r) => r.method !== 'DELETE'), ...routes.filter((r) => r.method === 'DELETE')];
    for (const route of ordered) {
      const access = route.access!;
      const expected = expectedFor(access, route, caller);
      const path = fillPath(route.path, own.params);
      let req = t.http()[route.method.toLowerCase() as 'get'](path);
      if (key) req = req.set('authorization', `Bearer ${key}`);
      const body = sampleBody(route.method, route.path, own.params);
      const res = await (body === undefined ? req : req.send(body));
      const label = `${caller.name} → ${describeRoute(route)}: ${res.status} ${res.body?.code ?? ''}`;
      const pastAccess =
        PAST_ACCESS[describeRoute(route)]?.status === res.status && PAST_ACCESS[describeRoute(route)]?.code === res.body?.code;
      // Nothing any route answers, success or refusal, may be kept by a cache (keys, secrets, data).
      if (!/^no-store$/.test(res.headers['cache-control'] ?? '') && !route.path.startsWith('/portal')) {
        wrong.push(`${label}, cache-control ${res.headers['cache-control']}`);
      }
      if (res.status >= 500) wrong.push(`${label} (a fault)`);
      else if (expected.kind === 'status') {
        if (res.status !== expected.status) wrong.push(`${label}, expected ${expected.status}`);
        else if (CODES[expected.status] && !CODES[expected.status].includes(res.body.code)) wrong.push(`${label}, unexpected code`);
        else if (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '')) wrong.push(`${label}, not problem details`);
      } else if (caller.name === "another organization's admin key") {
        // Let through, but a body naming this organization's objects finds nothing.
        if (res.status >= 300 && res.status !== 404 && !pastAccess) wrong.push(`${label}, expected success or 404`);
      } else if (res.status >= 300 && !pastAccess) {
        // Sample bodies are valid, so a route a caller may use succeeds.
        wrong.push(`${label}, expected success`);
      }
      if (caller.name === "another organization's admin key" && res.status < 300) {
        // Whatever another organization is let through to, none of this organization's data shows.
        const text = JSON.stringify(res.body);
        const leaked = ownIds.filter((id) => text.toLowerCase().includes(id.toLowerCase()));
        if (leaked.length > 0) wrong.push(`${label}, shows ${leaked.join(', ')}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
