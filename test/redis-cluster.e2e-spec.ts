import { bearer, createOrganization } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { LocalRedisCluster } from './support/redis-cluster';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';

const SECRET = 'cluster-shared-secret-0001';

/** The service on a Redis Cluster (REDIS_CLUSTER_NODES): the delivery suite's core cases. */
describe('webhook delivery on a Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let t: TestApp;
  let receiver: TestReceiver;
  const prefix = `t${process.env.TEST_RUN_ID}cluster`;

  beforeAll(async () => {
    // Assigned before starting, so that afterAll stops whatever a failed start left running.
    cluster = new LocalRedisCluster();
    await cluster.start();
    t = await createTestApp({
      REDIS_CLUSTER_NODES: cluster.nodes,
      QUEUE_PREFIX: prefix,
      WEBHOOK_RETRY_SCHEDULE: '200ms,1s,1s,1s',
    });
  }, 60_000);
  afterAll(async () => {
    try {
      await t?.close();
    } finally {
      await cluster?.stop();
    }
  });
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  it('delivers a signed webhook, with each queue on one node and the rate limiter on the cluster', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    const walletId = await createWallet(t, org);
    const [webhook] = await receiver.waitFor((r) => r.length >= 1);
    expect(webhook.body).toEqual(expect.objectContaining({ organizationId: org.id, resourceId: walletId, resourceType: 'Wallet' }));
    expect(signatureIsValid(webhook, SECRET)).toBe(true);

    const queueKeys = [...(await cluster.keysByNode(`{${prefix}}:*`)).values()].filter((keys) => keys.length > 0);
    expect(queueKeys).toHaveLength(1);
    const limiterKeys = [...(await cluster.keysByNode(`{${prefix}}:rate-limit:*`)).values()].flat();
    expect(limiterKeys.length).toBeGreaterThan(0);
  });

  it('retries 500, then 200, with the same id', async () => {
    receiver.behaviour = (n) => ({ status: n === 1 ? 500 : 200 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    await createWallet(t, org);
    const received = await receiver.waitFor((r) => r.length >= 2);
    expect(received[1].body.id).toBe(received[0].body.id);
    expect(received.map((w) => w.headers['x-service-webhook-attempt'])).toEqual(['1', '2']);
    await waitUntil(
      () =>
        t
          .http()
          .get(`${WEBHOOKS_PATH}/${received[0].body.id as string}`)
          .set(bearer(org.adminKey)),
      (res) => res.body.status === 'succeeded',
    );
  });

  it('delivers everything pending after every node is emptied', async () => {
    receiver.behaviour = () => ({ status: 500 });
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    const wallets = await Promise.all(Array.from({ length: 5 }, (_, i) => createWallet(t, org, `w${i}`)));
    await receiver.waitFor((r) => new Set(r.map((w) => w.body.resourceId)).size === 5);

    await cluster.flushAll();
    receiver.behaviour = () => ({ status: 200 });
    await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?status=succeeded`).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.length === 5,
      30_000,
    );
    const succeeded = new Set(
      receiver.received.filter((w) => w.body.resourceId && signatureIsValid(w, SECRET)).map((w) => w.body.resourceId),
    );
    expect([...succeeded].sort()).toEqual([...wallets].sort());
  });

  it('stops another instance of the service in the same process without touching this one, and leaves no connection behind', async () => {
    // ioredis opens a short-lived "refresher" connection for each periodic slot refresh of the
    // suite's own app: not a connection a stopped service could hold.
    const lasting = async () => (await cluster.namedClients()).filter((c) => !c.name.includes('(refresher)'));
    const before = new Set((await lasting()).map((c) => `${c.node}/${c.id}`));
    const opened = async () => (await lasting()).filter((c) => !before.has(`${c.node}/${c.id}`));
    const otherPrefix = `${prefix}other`;
    const other = await createTestApp({ REDIS_CLUSTER_NODES: cluster.nodes, QUEUE_PREFIX: otherPrefix });
    try {
      // The workers of both its queues wait for jobs, each on a blocking connection that Bull
      // names after its queue (how Bull lists a queue's workers).
      await waitUntil(opened, (clients) => clients.filter((c) => c.name.startsWith(`{${otherPrefix}}:`)).length === 2, 30_000);
    } finally {
      await other.close();
    }
    await waitUntil(opened, (clients) => clients.length === 0, 15_000);

    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    const walletId = await createWallet(t, org);
    const [webhook] = await receiver.waitFor((r) => r.length >= 1);
    expect(webhook.body).toEqual(expect.objectContaining({ resourceId: walletId }));
  });

  it("counts an endpoint's rate limit on the cluster: at most its limit in any second, each endpoint's count on one node", async () => {
    const RATE = 3;
    const WRITES = 9;
    const org = await createOrganization(t);
    const endpoint = (
      await t
        .http()
        .post('/api/organization/v1/current-organization/webhook-endpoints')
        .set(bearer(org.adminKey))
        .send({ url: receiver.url, sharedSecret: SECRET, webhookTypes: ['custodialAccount'], rateLimitPerSecond: RATE })
        .expect(201)
    ).body as { id: string };
    const wallets = await Promise.all(Array.from({ length: WRITES }, (_, i) => createWallet(t, org, `rate${i}`)));
    // While the limited stream runs (3 seconds at least), its count lives on exactly one node.
    await receiver.waitFor((r) => r.length >= 1);
    const countKeys = [...(await cluster.keysByNode(`${prefix}:endpoint-rate:{${endpoint.id}}`)).values()].filter(
      (keys) => keys.length > 0,
    );
    expect(countKeys).toHaveLength(1);
    const received = await receiver.waitFor((r) => new Set(r.map((w) => w.body.resourceId)).size === WRITES, 30_000);
    expect(new Set(received.map((w) => w.body.resourceId))).toEqual(new Set(wallets));
    // An attempt is signed with the second its window gave it its place.
    const perSecond = new Map<string, number>();
    for (const w of received) {
      const second = String(w.headers['webhook-timestamp']);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(RATE);
    expect(perSecond.size).toBeGreaterThanOrEqual(WRITES / RATE);
  });
});
