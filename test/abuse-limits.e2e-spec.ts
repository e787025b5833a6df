import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

let prefixCounter = 0;
/** Rate-limit counts live under the queue prefix: a fresh prefix is a fresh set of counts. */
const freshPrefix = () => `trl${process.env.TEST_RUN_ID}n${(prefixCounter += 1)}`;

describe('rate limits', () => {
  let setup: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    setup = await createTestApp();
    org = await createOrganization(setup);
  });
  afterAll(async () => {
    await setup.close();
  });

  describe('with a tiny limit shared by two instances', () => {
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      const env = { QUEUE_PREFIX: freshPrefix(), RATE_LIMIT_PER_KEY: '3', RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW: '1m' };
      a = await createTestApp(env);
      b = await createTestApp(env);
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('counts a key across instances and answers 429 problem details with Retry-After', async () => {
      const readKey = (await createApiKey(setup, org.id, ['read'])).key;
      const first = await a.http().get('/v1/wallets').set(bearer(readKey)).expect(200);
      expect(first.headers['x-ratelimit-limit']).toBe('3');
      expect(first.headers['x-ratelimit-remaining']).toBe('2');
      await b.http().get('/v1/wallets').set(bearer(readKey)).expect(200);
      await a.http().get('/v1/wallets').set(bearer(readKey)).expect(200);

      const limited = await b.http().get('/v1/wallets').set(bearer(readKey)).set('x-request-id', 'rl-1');
      expectProblem(limited, 429, 'RATE_LIMITED');
      expect(limited.body.requestId).toBe('rl-1');
      const retryAfter = Number(limited.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The limit is per key, not per route: every route of the key is refused now.
      expectProblem(await a.http().get(`/v1/wallets/${org.id}`).set(bearer(readKey)), 429, 'RATE_LIMITED');
    });

    it('leaves another key of the same organization unaffected', async () => {
      const busy = (await createApiKey(setup, org.id, ['write'])).key;
      const other = (await createApiKey(setup, org.id, ['write'])).key;
      for (let i = 0; i < 3; i += 1) await a.http().post('/v1/wallets').set(bearer(busy)).send({}).expect(201);
      expectProblem(await a.http().post('/v1/wallets').set(bearer(busy)).send({}), 429, 'RATE_LIMITED');
      await b.http().post('/v1/wallets').set(bearer(other)).send({}).expect(201);
    });

    it('counts requests without a valid key per client IP, made-up and revoked keys included', async () => {
      const ip = { 'x-forwarded-for': '203.0.113.7' };
      const revoked = await createApiKey(setup, org.id, ['admin']);
      await setup.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${revoked.id}`).set(bearer(OPERATOR_KEY)).expect(204);

      expectProblem(await a.http().get('/v1/wallets').set(ip), 401, 'UNAUTHENTICATED');
      expectProblem(await b.http().get('/v1/wallets').set(ip).set(bearer('made-up-key-0123456789')), 401, 'INVALID_API_KEY');
      expectProblem(await a.http().get('/v1/wallets').set(ip).set(bearer(revoked.key)), 429, 'RATE_LIMITED');
      expectProblem(await b.http().post('/admin/v1/organizations').set(ip).send({ name: 'x' }), 429, 'RATE_LIMITED');

      // Another client address, and a valid key from the blocked address, are not affected.
      expectProblem(await a.http().get('/v1/wallets').set({ 'x-forwarded-for': '203.0.113.8' }), 401, 'UNAUTHENTICATED');
      const fresh = (await createApiKey(setup, org.id, ['read'])).key;
      await a.http().get('/v1/wallets').set(ip).set(bearer(fresh)).expect(200);
    });

    it('never limits health probes and metrics', async () => {
      for (let i = 0; i < 10; i += 1) {
        await a.http().get('/health/live').expect(200);
        await b.http().get('/metrics').expect(200);
      }
      await a.http().get('/health/ready').expect(200);
    });
  });

  it('lets a caller in again once the window is over', async () => {
    const t = await createTestApp({ QUEUE_PREFIX: freshPrefix(), RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_WINDOW: '1s' });
    try {
      const key = (await createApiKey(setup, org.id, ['read'])).key;
      await t.http().get('/v1/wallets').set(bearer(key)).expect(200);
      const limited = await t.http().get('/v1/wallets').set(bearer(key));
      expectProblem(limited, 429, 'RATE_LIMITED');
      await new Promise((r) => setTimeout(r, Number(limited.headers['retry-after']) * 1000 + 200));
      await t.http().get('/v1/wallets').set(bearer(key)).expect(200);
    } finally {
      await t.close();
    }
  });

  it('fails open when Redis is unreachable: writes succeed and a warning is logged', async () => {
    const t = await createTestApp({ REDIS_URL: 'redis://127.0.0.1:6', RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_PER_IP: '1' });
    try {
      for (let i = 0; i < 3; i += 1)
        await t
          .http()
          .post('/v1/wallets')
          .set(bearer(org.adminKey))
          .send({ name: `open ${i}` })
          .expect(201);
      expectProblem(await t.http().get('/v1/wallets'), 401, 'UNAUTHENTICATED');
      expectProblem(await t.http().get('/v1/wallets'), 401, 'UNAUTHENTICATED');
      // Framework-level loggers are process-wide, so the line may sit in either app's capture.
      const lines = [...setup.logs, ...t.logs];
      expect(lines.some((line) => line.includes('rate limiting is off while Redis is unreachable'))).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('RATE_LIMIT_PER_KEY=0 turns the per-key limit off', async () => {
    const t = await createTestApp({ QUEUE_PREFIX: freshPrefix(), RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_IP: '1' });
    try {
      for (let i = 0; i < 5; i += 1) {
        const res = await t.http().get('/v1/wallets').set(bearer(org.adminKey)).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });
});

describe('request body limits', () => {
  let t: TestApp;
  let org: TestOrganization;
  const nested = (depth: number): unknown => (depth === 0 ? 'leaf' : { n: nested(depth - 1) });

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('400 JSON_TOO_DEEP for a body nested deeper than 32 levels, before anything reads it', async () => {
    const before = await t.http().get('/v1/wallets?pageSize=1000').set(bearer(org.adminKey)).expect(200);
    const res = await t
      .http()
      .post('/v1/wallets')
      .set(bearer(org.adminKey))
      .send({ name: 'deep', x: nested(32) });
    expectProblem(res, 400, 'JSON_TOO_DEEP');
    const hostile = '['.repeat(100_000) + ']'.repeat(100_000);
    const huge = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).set('content-type', 'application/json').send(hostile);
    expectProblem(huge, 400, 'JSON_TOO_DEEP');
    const after = await t.http().get('/v1/wallets?pageSize=1000').set(bearer(org.adminKey)).expect(200);
    expect(after.body.wallets).toHaveLength(before.body.wallets.length);
  });

  it('accepts 32 levels as far as depth goes (the body is then judged by validation)', async () => {
    const res = await t
      .http()
      .post('/v1/wallets')
      .set(bearer(org.adminKey))
      .send({ name: 'deep', x: nested(31) });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual([{ field: 'x', message: 'is not an accepted field' }]);
  });

  it('400 INVALID_CHARACTER for strings PostgreSQL could not store, and nothing is written', async () => {
    const before = await t.http().get('/v1/wallets?pageSize=1000').set(bearer(org.adminKey)).expect(200);
    expectProblem(await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'a\u0000b' }), 400, 'INVALID_CHARACTER');
    const operator = bearer(OPERATOR_KEY);
    expectProblem(await t.http().post('/admin/v1/organizations').set(operator).send({ name: 'x\ud800' }), 400, 'INVALID_CHARACTER');
    const after = await t.http().get('/v1/wallets?pageSize=1000').set(bearer(org.adminKey)).expect(200);
    expect(after.body.wallets).toHaveLength(before.body.wallets.length);
    // The six characters backslash-u-0-0-0-0 are ordinary text.
    const literal = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'a\\u0000b' }).expect(201);
    expect(literal.body.name).toBe('a\\u0000b');
  });

  it('413 for a body over the size limit', async () => {
    const res = await t
      .http()
      .post('/v1/wallets')
      .set(bearer(org.adminKey))
      .send({ name: 'x'.repeat(300 * 1024) });
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
  });
});
