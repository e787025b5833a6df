import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { sql } from './support/nft';
import { TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, WEBHOOKS_PATH } from './support/webhooks';

const SECRET = 'receiver-shared-secret-0001';
const HOUR_MS = 3_600_000;
const utc = (date: Date) => date.toISOString().replace('Z', '+00:00');

/** The delivery log filters by type and creation time on the server, page after page. */
describe('delivery log filters', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await new TestReceiver().start();
    org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    for (const webhookType of ['nft', 'transaction', 'kyc']) {
      const sent = await t.http().post(`${CONFIG_PATH}/test`).set(bearer(org.adminKey)).send({ webhookType }).expect(202);
      ids[webhookType] = sent.body.id as string;
    }
    // The kyc webhook as if created two days ago.
    await sql(t, `update webhook_delivery set created_at = now() - interval '2 days' where id = ?`, [ids.kyc]);
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  const log = (query: string) => t.http().get(`${WEBHOOKS_PATH}?${query}`).set(bearer(org.adminKey));
  const typesOf = (body: { webhooks: { webhookType: string }[] }) => body.webhooks.map((w) => w.webhookType).sort();

  it('takes one or several types', async () => {
    expect(typesOf((await log('webhookType=nft').expect(200)).body)).toEqual(['nft']);
    expect(typesOf((await log('webhookType=nft&webhookType=kyc').expect(200)).body)).toEqual(['kyc', 'nft']);
  });

  it('takes a creation-time window, since inclusive and until exclusive', async () => {
    const yesterday = utc(new Date(Date.now() - 24 * HOUR_MS));
    expect(typesOf((await log(`since=${encodeURIComponent(yesterday)}`).expect(200)).body)).toEqual(['nft', 'transaction']);
    expect(typesOf((await log(`until=${encodeURIComponent(yesterday)}`).expect(200)).body)).toEqual(['kyc']);
    const [{ created_at: created }] = await sql<{ created_at: Date }>(t, 'select created_at from webhook_delivery where id = ?', [ids.kyc]);
    const at = encodeURIComponent(utc(new Date(created)));
    expect(typesOf((await log(`since=${at}&webhookType=kyc`).expect(200)).body)).toEqual(['kyc']);
    expect(typesOf((await log(`until=${at}&webhookType=kyc`).expect(200)).body)).toEqual([]);
  });

  it('pages through the filtered log with full pages', async () => {
    const first = await log('webhookType=nft&webhookType=transaction&pageSize=1').expect(200);
    expect(first.body.webhooks).toHaveLength(1);
    expect(first.body.nextPageKey).toEqual(expect.any(String));
    const second = await log(`webhookType=nft&webhookType=transaction&pageSize=1&pageKey=${first.body.nextPageKey}`).expect(200);
    expect(second.body.webhooks).toHaveLength(1);
    expect(second.body.nextPageKey).toBeNull();
    expect([first.body.webhooks[0].id, second.body.webhooks[0].id]).toEqual([ids.transaction, ids.nft]);
  });

  it('refuses a bad filter with a 400 naming it', async () => {
    expectProblem(await log('webhookType=email'), 400, 'VALIDATION_FAILED');
    expectProblem(await log('since=yesterday'), 400, 'VALIDATION_FAILED');
    const now = encodeURIComponent(utc(new Date()));
    const res = await log(`since=${now}&until=${now}`);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(res.body)).toContain('until');
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body;
    const names = (doc.paths[WEBHOOKS_PATH].get.parameters as { name: string }[]).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['webhookType', 'since', 'until', 'status', 'endpointId']));
  });
});
