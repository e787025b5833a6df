import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { bearer, createOrganization } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

interface Answer {
  status: number;
  body: Record<string, any>;
}

/**
 * TRUST_PROXY names 127.0.0.2 as the one proxy. Requests from 127.0.0.1 stand for any other
 * peer: whatever X-Forwarded-For they carry, they are 127.0.0.1.
 */
describe('trusted proxies (TRUST_PROXY)', () => {
  let t: TestApp;
  let port: number;

  const send = (
    from: '127.0.0.1' | '127.0.0.2',
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          localAddress: from,
          method,
          path,
          agent: false,
          headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  beforeAll(async () => {
    t = await createTestApp({
      TRUST_PROXY: '127.0.0.2',
      RATE_LIMIT_PER_IP: '3',
      RATE_LIMIT_WINDOW: '1m',
      // Counters of its own, so other suites' requests from loopback do not count here.
      QUEUE_PREFIX: `tp${Date.now().toString(36)}`,
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  it('a forged X-Forwarded-For from an untrusted peer does not change its rate-limit identity', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 5; i += 1) {
      statuses.push((await send('127.0.0.1', 'GET', '/v1/wallets', { 'x-forwarded-for': `198.51.100.${i}` })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it('the trusted proxy does name the client, one identity per forwarded address', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 5; i += 1) {
      statuses.push((await send('127.0.0.2', 'GET', '/v1/wallets', { 'x-forwarded-for': `203.0.113.${i}` })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
  });

  it("records the peer's own address in the audit log unless the peer is the trusted proxy", async () => {
    const org = await createOrganization(t);
    const create = (from: '127.0.0.1' | '127.0.0.2', name: string, forwardedFor: string) =>
      send(
        from,
        'POST',
        '/api/organization/v1/current-organization/api-keys',
        { ...bearer(org.adminKey), 'x-forwarded-for': forwardedFor },
        {
          name,
          roles: ['read'],
        },
      );
    expect((await create('127.0.0.1', 'forged', '203.0.113.50')).status).toBe(201);
    expect((await create('127.0.0.2', 'proxied', '203.0.113.51')).status).toBe(201);

    const log = await send('127.0.0.1', 'GET', '/api/organization/v1/current-organization/audit-log', bearer(org.adminKey));
    expect(log.status).toBe(200);
    const ipOf = (name: string) =>
      log.body.entries.find((e: { action: string; changes: Record<string, { to: unknown }> }) => e.changes?.name?.to === name)?.ip;
    expect(ipOf('forged')).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(ipOf('proxied')).toBe('203.0.113.51');
  });
});
