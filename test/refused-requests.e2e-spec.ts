import { metricsRegistry } from '../src/common/metrics';
import { bearer, createApiKey, createOrganization, TestOrganization } from './support/factories';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

interface Refusal {
  requestId: string;
  status: number;
  code: string;
  ip: string | null;
  keyPrefix: string | null;
}

/** Every 401 and 403 is logged with the client IP, the problem code and the presented key's prefix, and counted. */
describe('refused requests are traceable', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
  });
  afterAll(() => t.close());

  const refusalOf = (requestId: string): Refusal[] =>
    t.logs
      .map((line) => JSON.parse(line) as { msg?: string; refused?: Refusal })
      .filter((line) => line.msg === 'request refused' && line.refused?.requestId === requestId)
      .map((line) => line.refused!);

  const failures = async (code: string): Promise<number> => {
    const metric = await metricsRegistry.getSingleMetric('auth_failures_total')!.get();
    return metric.values.find((v) => v.labels.code === code)?.value ?? 0;
  };

  it('logs an unknown key with its first 13 characters, the code and the client IP (as trusted), and counts it', async () => {
    const before = await failures('INVALID_API_KEY');
    const madeUp = `nftw_${'Z'.repeat(43)}`;
    await t
      .http()
      .get('/v1/wallets')
      .set(bearer(madeUp))
      .set('x-request-id', 'refused-unknown-key')
      // The test client is on loopback, a trusted proxy by default: the forwarded client counts.
      .set('x-forwarded-for', '198.51.100.23')
      .expect(401);
    expect(refusalOf('refused-unknown-key')).toEqual([
      { requestId: 'refused-unknown-key', status: 401, code: 'INVALID_API_KEY', ip: '198.51.100.23', keyPrefix: madeUp.slice(0, 13) },
    ]);
    expect(await failures('INVALID_API_KEY')).toBe(before + 1);
    expect(t.logs.filter((line) => line.includes(madeUp))).toEqual([]);
  });

  it('logs a missing key, a key lacking the role (403) and the operator key on an API route', async () => {
    const before = await failures('FORBIDDEN');
    await t.http().get('/v1/wallets').set('x-request-id', 'refused-no-key').expect(401);
    expect(refusalOf('refused-no-key')).toEqual([expect.objectContaining({ code: 'UNAUTHENTICATED', keyPrefix: null, ip: '127.0.0.1' })]);

    const read = await createApiKey(t, org.id, ['read']);
    await t
      .http()
      .get('/api/organization/v1/current-organization/api-keys')
      .set(bearer(read.key))
      .set('x-request-id', 'refused-role')
      .expect(403);
    expect(refusalOf('refused-role')).toEqual([expect.objectContaining({ status: 403, code: 'FORBIDDEN', keyPrefix: read.keyPrefix })]);
    expect(await failures('FORBIDDEN')).toBe(before + 1);

    await t.http().get('/v1/wallets').set(bearer(OPERATOR_KEY)).set('x-request-id', 'refused-operator').expect(401);
    expect(refusalOf('refused-operator')).toEqual([expect.objectContaining({ code: 'INVALID_API_KEY', keyPrefix: 'operator' })]);
    // A wrong operator key is not an API key: none of it is logged.
    await t
      .http()
      .get('/admin/v1/organizations')
      .set(bearer(`${OPERATOR_KEY}-wrong`))
      .set('x-request-id', 'refused-wrong-operator')
      .expect(401);
    expect(refusalOf('refused-wrong-operator')).toEqual([expect.objectContaining({ code: 'INVALID_API_KEY', keyPrefix: null })]);
  });

  it('shows the counter at /metrics', async () => {
    const res = await t.http().get('/metrics').expect(200);
    expect(res.text).toMatch(/^auth_failures_total\{code="INVALID_API_KEY"\} \d+$/m);
  });
});
