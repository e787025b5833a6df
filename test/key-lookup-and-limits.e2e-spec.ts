import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { generateApiKey } from '../src/modules/organizations/api-key.rules';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

let prefixCounter = 0;
/** Rate-limit counts live under the queue prefix: a fresh prefix is a fresh set of counts. */
const freshPrefix = () => `tkl${process.env.TEST_RUN_ID}n${(prefixCounter += 1)}`;

/** Every statement the app sends to the api_key table while `work` runs. */
async function keyLookupsDuring(t: TestApp, work: () => Promise<unknown>): Promise<number> {
  const knex = (t.app.get(MikroORM).em as EntityManager).getKnex();
  let lookups = 0;
  const listener = (query: { sql: string }) => {
    if (/"api_key"/.test(query.sql)) lookups += 1;
  };
  knex.on('query', listener);
  try {
    await work();
  } finally {
    knex.off('query', listener);
  }
  return lookups;
}

describe('API key lookups', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp({ API_KEY_CACHE_TTL_MS: '5000' });
    org = await createOrganization(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a string that cannot be a key without looking it up', async () => {
    const lookups = await keyLookupsDuring(t, async () => {
      for (const junk of ['made-up-key-0123456789', 'nftw_short', `nftw_${'A'.repeat(42)}!`]) {
        expectProblem(await t.http().get('/v1/wallets').set(bearer(junk)), 401, 'INVALID_API_KEY');
      }
    });
    expect(lookups).toBe(0);
  });

  it('remembers an unknown key briefly: repeating it costs one lookup, still a 401 every time', async () => {
    const unknown = generateApiKey().key;
    const lookups = await keyLookupsDuring(t, async () => {
      for (let i = 0; i < 10; i += 1) expectProblem(await t.http().get('/v1/wallets').set(bearer(unknown)), 401, 'INVALID_API_KEY');
    });
    expect(lookups).toBe(1);
  });

  it('a key revoked through this instance is refused at once, though its lookup was cached', async () => {
    const key = await createApiKey(t, org.id, ['read']);
    await t.http().get('/v1/wallets').set(bearer(key.key)).expect(200);
    await t.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${key.id}`).set(bearer(OPERATOR_KEY)).expect(204);
    expectProblem(await t.http().get('/v1/wallets').set(bearer(key.key)), 401, 'INVALID_API_KEY');
  });
});

describe('rate limits under concurrency', () => {
  let setup: TestApp;
  let a: TestApp;
  let b: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    setup = await createTestApp();
    org = await createOrganization(setup);
    const env = { QUEUE_PREFIX: freshPrefix(), RATE_LIMIT_PER_KEY: '7', RATE_LIMIT_PER_IP: '4', RATE_LIMIT_WINDOW: '1m' };
    a = await createTestApp(env);
    b = await createTestApp(env);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await setup.close();
  });

  it('a burst of concurrent requests on two instances gets exactly the limit through, each with its own count', async () => {
    const key = (await createApiKey(setup, org.id, ['read'])).key;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).http().get('/v1/wallets').set(bearer(key))));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(7);
    for (const limited of answers.filter((r) => r.status !== 200)) expectProblem(limited, 429, 'RATE_LIMITED');
    // Every admitted request saw a different count: remaining 6, 5, ... 0, each exactly once.
    expect(ok.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('a burst of made-up keys from one address is counted against that address', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.77' };
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).http().get('/v1/wallets').set(ip).set(bearer(generateApiKey().key))),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 429, 429, 429, 429, 429, 429]);
  });
});
