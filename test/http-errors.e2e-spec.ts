import { bearer, createOrganization, expectProblem } from './support/factories';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

describe('problem details for every kind of bad request', () => {
  let t: TestApp;
  const operator = bearer(OPERATOR_KEY);

  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('echoes a caller x-request-id and generates one otherwise', async () => {
    const given = await t.http().get('/health/live').set('x-request-id', 'trace-abc-123').expect(200);
    expect(given.headers['x-request-id']).toBe('trace-abc-123');
    const generated = await t.http().get('/health/live').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await t.http().get('/health/live').set('x-request-id', 'bad id\twith spaces').expect(200);
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('404 ROUTE_NOT_FOUND for an unknown route', async () => {
    const res = await t.http().get('/v9/nothing-here').set('x-request-id', 'req-404');
    expectProblem(res, 404, 'ROUTE_NOT_FOUND');
    expect(res.body.requestId).toBe('req-404');
  });

  it('marks every answer Cache-Control: no-store, those no route or body parser reached included', async () => {
    const answers = await Promise.all([
      t.http().get('/v9/nothing-here'),
      t.http().post('/admin/v1/organizations').set(operator).set('content-type', 'application/json').send('{"name":'),
      t.http().post('/admin/v1/organizations').set(operator).set('content-type', 'text/plain').send('name=Acme'),
      t.http().get('/health/live'),
      t.http().get('/docs-json'),
    ]);
    expect(answers.map((res) => [res.status, res.headers['cache-control']])).toEqual([
      [404, 'no-store'],
      [400, 'no-store'],
      [415, 'no-store'],
      [200, 'no-store'],
      [200, 'no-store'],
    ]);
    // An answer carrying a new key, above all.
    const created = await t.http().post('/admin/v1/organizations').set(operator).send({ name: 'No store' }).expect(201);
    const key = await t
      .http()
      .post(`/admin/v1/organizations/${created.body.id}/api-keys`)
      .set(operator)
      .send({ name: 'k', roles: ['read'] })
      .expect(201);
    expect(key.headers['cache-control']).toBe('no-store');
  });

  it('400 MALFORMED_JSON for a body that is not JSON', async () => {
    const res = await t.http().post('/admin/v1/organizations').set(operator).set('content-type', 'application/json').send('{"name":');
    expectProblem(res, 400, 'MALFORMED_JSON');
  });

  it('415 for a body that is not JSON at all', async () => {
    const res = await t.http().post('/admin/v1/organizations').set(operator).set('content-type', 'text/plain').send('name=Acme');
    expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('413 PAYLOAD_TOO_LARGE above the body limit', async () => {
    const res = await t
      .http()
      .post('/admin/v1/organizations')
      .set(operator)
      .send({ name: 'x'.repeat(5000) });
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('400 VALIDATION_FAILED listing unknown and invalid fields', async () => {
    const res = await t.http().post('/admin/v1/organizations').set(operator).send({ name: 42, extra: true });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual(
      expect.arrayContaining([{ field: 'extra', message: 'is not an accepted field' }, expect.objectContaining({ field: 'name' })]),
    );
  });

  it('400 for a JSON body that is not an object', async () => {
    const res = await t.http().post('/admin/v1/organizations').set(operator).set('content-type', 'application/json').send('"Acme"');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });

  it('400 INVALID_PATH_PARAMETER for a path id that is not a UUID', async () => {
    const res = await t
      .http()
      .post('/admin/v1/organizations/not-a-uuid/api-keys')
      .set(operator)
      .send({ name: 'k', roles: ['read'] });
    expectProblem(res, 400, 'INVALID_PATH_PARAMETER');
  });

  it('400 for bad pagination parameters', async () => {
    expectProblem(await t.http().get('/admin/v1/organizations?pageSize=0').set(operator), 400, 'VALIDATION_FAILED');
    expectProblem(await t.http().get('/admin/v1/organizations?pageSize=1001').set(operator), 400, 'VALIDATION_FAILED');
    expectProblem(await t.http().get('/admin/v1/organizations?pageSize=abc').set(operator), 400, 'VALIDATION_FAILED');
    expectProblem(await t.http().get('/admin/v1/organizations?pageKey=%%%').set(operator), 400, 'INVALID_PAGE_KEY');
  });

  it('changes nothing when a request is rejected', async () => {
    const org = await createOrganization(t);
    const before = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(org.adminKey)).expect(200);
    await t
      .http()
      .post('/api/organization/v1/current-organization/api-keys')
      .set(bearer(org.adminKey))
      .send({ name: 'x', roles: ['superuser'] })
      .expect(400);
    const after = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(org.adminKey)).expect(200);
    expect(after.body).toEqual(before.body);
  });
});

describe('health, metrics and documentation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers live and ready when PostgreSQL and Redis are up', async () => {
    expect((await t.http().get('/health/live').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.http().get('/health/ready').expect(200)).body).toEqual({
      status: 'ok',
      checks: { database: 'up', redis: 'up' },
    });
  });

  it('serves Prometheus metrics with HTTP latency histograms', async () => {
    await t.http().get('/health/live').expect(200);
    const res = await t.http().get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('http_request_duration_seconds_bucket');
  });

  it('publishes the OpenAPI document with both bearer schemes', async () => {
    const res = await t.http().get('/docs-json').expect(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.components.securitySchemes).sort()).toEqual(['apiKey', 'operatorKey']);
    expect(res.body.paths['/admin/v1/organizations'].post.security).toEqual([{ operatorKey: [] }]);
    expect(res.body.paths['/api/organization/v1/current-organization/api-keys'].get.security).toEqual([{ apiKey: [] }]);
    const ui = await t.http().get('/docs/').expect(200);
    expect(ui.text).toContain('swagger-ui');
  });
});

describe('readiness when Redis is unreachable', () => {
  it('answers 503 NOT_READY naming Redis', async () => {
    const t = await createTestApp({ REDIS_URL: 'redis://127.0.0.1:6' });
    try {
      const res = await t.http().get('/health/ready');
      expectProblem(res, 503, 'NOT_READY');
      expect(res.body.detail).toContain('redis');
      await t.http().get('/health/live').expect(200);
    } finally {
      await t.close();
    }
  });
});

describe('ROLE=worker', () => {
  it('serves probes but no API', async () => {
    const t = await createTestApp({ ROLE: 'worker' });
    try {
      await t.http().get('/health/live').expect(200);
      expectProblem(await t.http().get('/admin/v1/organizations').set(bearer(OPERATOR_KEY)), 404, 'ROUTE_NOT_FOUND');
      expectProblem(await t.http().get('/docs-json'), 404, 'ROUTE_NOT_FOUND');
    } finally {
      await t.close();
    }
  });
});
