import fc from 'fast-check';
import type { Response } from 'supertest';
import { createOrgFixture, FIXTURE_CHAIN_ENV, OrgFixture, sampleBody } from './support/org-fixture';
import { orgState } from './support/org-state';
import { TestReceiver } from './support/receiver';
import { AppRoute, controllerRoutes, describeRoute, fillPath, percentEncode } from './support/routes';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

/**
 * Property-based bad input over every route of the running app: hostile bodies, path parameters
 * and query strings, sent with a key that may use the route so that the input reaches validation
 * and the services. Every answer must be a success or a 4xx problem details body, and a refused
 * request must leave the organization's data exactly as it was.
 */
const RUNS = { body: 30, path: 15, query: 15 };

const HOSTILE_STRINGS = [
  '',
  ' ',
  "' OR 1=1 --",
  '"; DROP TABLE wallet; --',
  '../../../etc/passwd',
  '%00',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\u202Egnp.exe',
  '<script>alert(1)</script>',
  '${jndi:ldap://x/a}',
  '__proto__',
  'constructor',
  'NaN',
  '-1',
  '1e309',
  '0.5',
  '9'.repeat(80),
  '0x',
  `0x${'f'.repeat(40)}`,
  `0x${'G'.repeat(40)}`,
  'javascript:alert(1)',
  'http://169.254.169.254/latest/meta-data/',
  'http://user:pass@example.com/',
  'ipfs://',
  'data:,',
  'A'.repeat(3000),
];

const FIELD_NAMES = [
  'name',
  'address',
  'contractAddress',
  'blockchainTokenId',
  'metadata',
  'editionId',
  'totalEdition',
  'image',
  'tokenId',
  'fromWalletId',
  'toWalletId',
  'amount',
  'url',
  'enabled',
  'sharedSecret',
  'webhookTypes',
  'webhookType',
  'roles',
  'contractAddresses',
  '__proto__',
  'constructor',
];

const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.uuid(),
  fc.stringMatching(/^0x[0-9a-fA-F]{40}$/),
  fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }).map(String),
);

const hostileKey = fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string({ maxLength: 12 }));

const { value: hostileValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileKey, tie('value'), { maxKeys: 4 }),
  ),
}));

/** What goes over the wire: a JSON value, or raw text labelled as JSON. */
type Payload = { json: unknown } | { raw: string };

/** The sample with every string in it, nested ones included, replaced by a hostile string. */
function withHostileStrings(sample: unknown): fc.Arbitrary<unknown> {
  if (typeof sample === 'string') return fc.constantFrom(...HOSTILE_STRINGS);
  if (Array.isArray(sample)) return fc.tuple(...sample.map(withHostileStrings));
  if (sample !== null && typeof sample === 'object') {
    return fc.record(Object.fromEntries(Object.entries(sample).map(([k, v]) => [k, withHostileStrings(v)])));
  }
  return fc.constant(sample);
}

function bodyArbitrary(sample: Record<string, unknown>): fc.Arbitrary<Payload> {
  const fields = Object.keys(sample).length > 0 ? Object.keys(sample) : ['name'];
  return fc.oneof(
    withHostileStrings(sample).map((json) => ({ json })),
    hostileValue.map((json) => ({ json })),
    fc.dictionary(hostileKey, hostileValue, { maxKeys: 5 }).map((json) => ({ json })),
    // Mostly valid: one field of a valid body made hostile, or one field added.
    fc.tuple(fc.constantFrom(...fields, ...FIELD_NAMES), hostileValue).map(([field, value]) => ({ json: { ...sample, [field]: value } })),
    fc
      .tuple(fc.constantFrom('name', 'image', 'editionId', 'externalUrl', 'backgroundColor', 'unknown'), hostileValue)
      .map(([field, value]) => ({ json: { ...sample, metadata: { [field]: value } } })),
    fc
      .oneof(fc.string({ maxLength: 30 }), fc.constantFrom('{', '{"a":', '[1,]', '{"a":1}}', 'nul', '\u0000', '{"__proto__":{"x":1}}'))
      .map((raw) => ({ raw })),
  );
}

const QUERY_KEYS = ['pageSize', 'pageKey', 'status', 'contractAddress', 'pageSize[]', 'pageKey[a]', 'status[0]', '__proto__[x]'];
const queryArbitrary = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 8 })), fc.oneof(hostileString, fc.integer().map(String))),
  { maxLength: 4 },
);

function isProblem(res: Response): string | null {
  if (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '')) return 'not application/problem+json';
  const body = res.body as Record<string, unknown>;
  for (const field of ['type', 'title', 'detail', 'code']) if (typeof body[field] !== 'string') return `no ${field}`;
  if (body.status !== res.status) return 'status differs from the HTTP status';
  if (body.requestId !== res.headers['x-request-id']) return 'requestId differs from x-request-id';
  if (!/^[A-Z][A-Z0-9_]*$/.test(body.code as string)) return 'code is not UPPER_SNAKE';
  if (/\bat .+\.(js|ts):\d+|select |insert into/i.test(JSON.stringify(body))) return 'leaks internals';
  return null;
}

/** What is wrong with an answer, or null when it is a 4xx problem or a well-formed success. */
function judge(res: Response): string | null {
  if (res.status >= 500) return `a ${res.status} fault`;
  if (res.status >= 400) return isProblem(res);
  if (res.status >= 300) return `an unexpected ${res.status}`;
  if (res.status === 204) return res.text ? 'a 204 with a body' : null;
  // NDJSON: the audit-log export (its lines are checked in test/audit-chain.e2e-spec.ts); HTML,
  // CSS and JavaScript: the portal's static files (test/portal.e2e-spec.ts).
  if (
    !/^(application\/json|application\/x-ndjson|text\/plain|text\/html|text\/css|text\/javascript)/.test(res.headers['content-type'] ?? '')
  ) {
    return 'a success that is not JSON';
  }
  return null;
}

describe('bad input over every route', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let own: OrgFixture;
  let routes: AppRoute[];
  let state: Record<string, string>;
  let rejected = 0;

  beforeAll(async () => {
    t = await createTestApp(FIXTURE_CHAIN_ENV);
    receiver = await new TestReceiver().start();
    own = await createOrgFixture(t, receiver);
    routes = controllerRoutes(t.app);
    state = await orgState(t, own.org.id);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const keyFor = (route: AppRoute) =>
    route.access?.kind === 'operator' ? OPERATOR_KEY : route.access?.kind === 'apiKey' ? own.keys.admin : null;

  /** Sends one request and checks the answer, and that a refusal changed nothing. */
  async function probe(route: AppRoute, path: string, payload?: Payload): Promise<void> {
    let req = t.http()[route.method.toLowerCase() as 'get'](path);
    const key = keyFor(route);
    if (key) req = req.set('authorization', `Bearer ${key}`);
    if (payload && 'raw' in payload) req = req.set('content-type', 'application/json').send(payload.raw);
    else if (payload) req = req.set('content-type', 'application/json').send(JSON.stringify(payload.json));
    const res = await req;
    const problem = judge(res);
    const what = `${describeRoute(route)} at ${path} → ${res.status} ${res.text.slice(0, 300)}`;
    if (problem) throw new Error(`${problem}: ${what}`);
    const after = await orgState(t, own.org.id);
    if (res.status >= 400) {
      rejected += 1;
      expect({ request: what, state: after }).toEqual({ request: what, state });
    }
    state = after;
  }

  const settings = (numRuns: number) => ({ numRuns, endOnFailure: true });

  it('takes snapshots that see any write (so "unchanged" below means something)', async () => {
    expect(Object.keys(state).sort()).toEqual([
      'api_key',
      'audit_entry',
      'balance',
      'domain_event',
      'idempotency_key',
      'nft_transaction',
      'nft_whitelist',
      'nft_whitelist_contract',
      'organization',
      'token',
      'wallet',
      'webhook_endpoint',
    ]);
    await t
      .http()
      .patch(`/v1/tokens/${own.params.tokenId}`)
      .set('authorization', `Bearer ${own.keys.admin}`)
      .send({ metadata: { description: 'x' } })
      .expect(200);
    const after = await orgState(t, own.org.id);
    expect(after.token).not.toBe(state.token);
    expect(after.wallet).toBe(state.wallet);
    state = after;
  });

  it('answers hostile bodies on every writing route with a 4xx problem or a success', async () => {
    const writing = routes.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method));
    expect(writing.length).toBeGreaterThanOrEqual(10);
    for (const route of writing) {
      const sample = sampleBody(route.method, route.path, own.params) ?? {};
      const path = fillPath(route.path, own.params);
      await fc.assert(
        fc.asyncProperty(bodyArbitrary(sample), (payload) => probe(route, path, payload)),
        settings(RUNS.body),
      );
    }
    expect(rejected).toBeGreaterThan(writing.length * RUNS.body * 0.5);
  });

  it('answers hostile path parameters on every route that has them', async () => {
    const withParams = routes.filter((r) => r.params.length > 0);
    expect(withParams.length).toBeGreaterThanOrEqual(10);
    for (const route of withParams) {
      const arbitrary = fc.record(Object.fromEntries(route.params.map((p) => [p, hostileString] as const)));
      await fc.assert(
        fc.asyncProperty(arbitrary, async (values) => {
          // Empty segments would address a different route; that route gets its own turn.
          const filled = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === '' ? ' ' : v]));
          const body = sampleBody(route.method, route.path, own.params);
          await probe(route, fillPath(route.path, { ...own.params, ...filled }), body === undefined ? undefined : { json: body });
        }),
        settings(RUNS.path),
      );
    }
  });

  it('answers hostile query strings on every reading route', async () => {
    const reading = routes.filter((r) => r.method === 'GET');
    for (const route of reading) {
      const path = fillPath(route.path, own.params);
      await fc.assert(
        fc.asyncProperty(queryArbitrary, async (pairs) => {
          // Brackets stay literal so that the extended query parser builds arrays and objects.
          const query = pairs
            .map(([k, v]) => `${percentEncode(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${percentEncode(v)}`)
            .join('&');
          await probe(route, query ? `${path}?${query}` : path);
        }),
        settings(RUNS.query),
      );
    }
  });

  it('answers malformed percent-encoding in paths and queries with a 4xx', async () => {
    for (const route of routes.filter((r) => r.params.length > 0)) {
      const path = route.path.replace(/:(\w+)/g, '%E0%A4%A');
      await probe(route, path);
    }
    for (const route of routes.filter((r) => r.method === 'GET' && r.params.length === 0)) {
      await probe(route, `${route.path}?pageSize=%ZZ&pageKey=%E0%A4%A`);
    }
  });
});
