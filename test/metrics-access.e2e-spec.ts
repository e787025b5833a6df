import { createServer } from 'node:net';
import request from 'supertest';
import { MetricsListener } from '../src/modules/health/metrics-text';
import { expectProblem } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const TOKEN = 'metrics-token-for-the-e2e-0001';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('/metrics guarded by METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  it('answers 401 without the token or with another one, and the Prometheus text with it', async () => {
    expectProblem(await t.http().get('/metrics'), 401, 'UNAUTHENTICATED');
    expectProblem(await t.http().get('/metrics').set('authorization', 'Bearer not-the-metrics-token-0000'), 401, 'INVALID_METRICS_TOKEN');
    // An API key or the operator key is not the metrics token.
    expectProblem(
      await t.http().get('/metrics').set('authorization', 'Bearer test-operator-key-0123456789abcdef'),
      401,
      'INVALID_METRICS_TOKEN',
    );
    const res = await t.http().get('/metrics').set('authorization', `Bearer ${TOKEN}`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
    expect(res.text).toContain('http_request_duration_seconds');
  });

  it('leaves the health probes open', async () => {
    await t.http().get('/health/live').expect(200);
  });
});

describe('/metrics on its own listener (METRICS_PORT)', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    t = await createTestApp({ METRICS_PORT: String(port), METRICS_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  it('is served without a token on METRICS_HOST:METRICS_PORT (127.0.0.1 by default), and not on the API port', async () => {
    expect(t.app.get(MetricsListener).address()).toMatchObject({ address: '127.0.0.1', port });
    const scrape = await request(`http://127.0.0.1:${port}`).get('/metrics').expect(200);
    expect(scrape.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
    expect(scrape.text).toContain('process_cpu_seconds_total');
    await request(`http://127.0.0.1:${port}`).get('/health/live').expect(404);
    // The API port answers as for any unknown route, token or not.
    expectProblem(await t.http().get('/metrics'), 404, 'ROUTE_NOT_FOUND');
    expectProblem(await t.http().get('/metrics').set('authorization', `Bearer ${TOKEN}`), 404, 'ROUTE_NOT_FOUND');
  });
});
