import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { FORBIDDEN_TARGET_MESSAGE } from '../src/common/net/url-policy';
import { BrokerMessage, MqttSubscriber, MQTT_URL, NATS_URL, RabbitExchange, RABBITMQ_URL } from './support/brokers';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { insertUpdates } from './support/nft';
import { waitUntil } from './support/receiver';
import { createTestApp, HttpTarget, TestApp } from './support/test-app';
import { addEndpoint, ENDPOINTS_PATH, WEBHOOKS_PATH } from './support/webhooks';

/*
 * Broker endpoints as their owner sees them once webhooks flow: what the consumer gets, what the
 * delivery log and the endpoint say, under the rules every endpoint has (rate limit, retry
 * schedule, auto-disable, ordering, the address policy). Real local brokers, names unique per run.
 */
const RUN = randomBytes(4).toString('hex');
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const TYPES = ['custodialAccount'];

interface Attempt {
  attempt: number;
  startedAtUtc: string;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}
interface Detail {
  id: string;
  status: string;
  attemptCount: number;
  lastResponseStatus: number | null;
  sequence: number | null;
  payload: Record<string, unknown>;
  attempts: Attempt[];
}
interface Summary {
  id: string;
  resourceId: string;
  status: string;
  attemptCount: number;
  sequence: number | null;
}

const get = async (t: HttpTarget, org: TestOrganization, path: string) =>
  (await t.http().get(path).set(bearer(org.adminKey)).expect(200)).body;
const createWallet = async (t: HttpTarget, org: TestOrganization, name = 'w') =>
  (await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name }).expect(201)).body.id as string;
const listOf = async (t: HttpTarget, org: TestOrganization, endpointId: string) =>
  (await get(t, org, `${WEBHOOKS_PATH}?endpointId=${endpointId}&pageSize=1000`)).webhooks as Summary[];
/** The delivery log's detail of the endpoint's webhook for a resource, once `done` holds. */
async function webhookOf(t: HttpTarget, org: TestOrganization, endpointId: string, resourceId: string, done: (d: Detail) => boolean) {
  const found = await waitUntil(
    () => listOf(t, org, endpointId),
    (list) => list.some((w) => w.resourceId === resourceId),
  );
  const id = found.find((w) => w.resourceId === resourceId)!.id;
  return waitUntil(async () => (await get(t, org, `${WEBHOOKS_PATH}/${id}`)) as Detail, done, 30_000);
}
const rabbit = (exchange: string, routingKey = 'webhooks.{webhookType}.{action}') => ({
  type: 'rabbitmq',
  url: RABBITMQ_URL,
  exchange,
  routingKey,
});
const bodyOf = (message: BrokerMessage) => JSON.parse(message.raw.toString('utf8')) as Record<string, unknown>;

describe('broker endpoints in delivery: MQTT 5, rate limit, retries, auto-disable, ordering, NATS without a stream', () => {
  let t: TestApp;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    // Auto-disable after 2 s of nothing but failures (and at least ten failed webhooks), looked at every 200 ms.
    t = await createTestApp({
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
      WEBHOOK_AUTO_DISABLE_AFTER: '2s',
      WEBHOOK_RECONCILE_INTERVAL: '200ms',
    });
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await t.close();
  });
  const track = <T extends { close(): Promise<void> }>(resource: T): T => (cleanups.push(() => resource.close()), resource);

  it('MQTT 5: a subscriber gets the body with the webhook headers as user properties; the log shows the PUBACK reason code', async () => {
    const org = await createOrganization(t);
    const topics = track(await new MqttSubscriber(`nftw/${RUN}/mqtt/#`).start());
    const subscribed = await addEndpoint(t, org, '', {
      webhookTypes: TYPES,
      url: null,
      headers: { 'X-Gateway-Token': `gw-${RUN}` },
      destination: { type: 'mqtt', url: MQTT_URL, topic: `nftw/${RUN}/mqtt/{resourceType}/{resourceId}`, qos: 1 },
    });
    // Nobody subscribes to this one: the broker answers 0x10 (no matching subscribers), still a success.
    const unheard = await addEndpoint(t, org, '', {
      webhookTypes: TYPES,
      url: null,
      destination: { type: 'mqtt', url: MQTT_URL, topic: `nftw/${RUN}/unheard/{resourceId}`, qos: 1 },
    });

    const walletId = await createWallet(t, org);
    const delivered = await webhookOf(t, org, subscribed.id, walletId, (d) => d.status === 'succeeded');
    const [message] = await waitUntil(
      () => topics.received,
      (all) => all.length >= 1,
    );
    expect(topics.received).toHaveLength(1);
    expect(message.name).toBe(`nftw/${RUN}/mqtt/Wallet/${walletId}`);
    expect(bodyOf(message)).toEqual(delivered.payload);
    expect(bodyOf(message)).toEqual(expect.objectContaining({ id: delivered.id, resourceId: walletId, action: 'create' }));
    expect(message.headers).toEqual(
      expect.objectContaining({
        'webhook-id': delivered.id,
        'webhook-timestamp': expect.stringMatching(/^\d+$/),
        'webhook-signature': expect.stringMatching(/^v1,/),
        'x-service-webhook-id': delivered.id,
        'x-service-webhook-event-id': expect.any(String),
        'x-service-webhook-hmac': expect.any(String),
        'x-service-webhook-attempt': '1',
        'x-gateway-token': `gw-${RUN}`,
        'content-type': 'application/json',
      }),
    );
    expect(message.headers['user-agent']).toBeUndefined();
    const wh = new Webhook(`whsec_${Buffer.from(subscribed.secret, 'utf8').toString('base64')}`);
    expect(wh.verify(message.raw, message.headers)).toEqual(bodyOf(message));

    expect(delivered).toEqual(expect.objectContaining({ attemptCount: 1, lastResponseStatus: null }));
    expect(delivered.attempts.map((a) => [a.responseStatus, a.error, a.responseBody])).toEqual([[null, null, '{"reasonCode":0}']]);
    const alone = await webhookOf(t, org, unheard.id, walletId, (d) => d.status === 'succeeded');
    expect(alone.attempts.map((a) => [a.responseStatus, a.error, a.responseBody])).toEqual([[null, null, '{"reasonCode":16}']]);
    expect(topics.received).toHaveLength(1);
  });

  it('holds a broker endpoint to rateLimitPerSecond: 6 webhooks at 2 a second take three one-second windows, one attempt each', async () => {
    const org = await createOrganization(t);
    const exchange = track(await new RabbitExchange(`nftw-test-${RUN}-rate`).start());
    const endpoint = await addEndpoint(t, org, '', {
      webhookTypes: TYPES,
      url: null,
      rateLimitPerSecond: 2,
      destination: rabbit(exchange.name),
    });
    expect((await get(t, org, `${ENDPOINTS_PATH}/${endpoint.id}`)).rateLimitPerSecond).toBe(2);

    const wallets: string[] = [];
    for (let i = 0; i < 6; i += 1) wallets.push(await createWallet(t, org, `rate ${i}`));
    const received = await waitUntil(
      () => exchange.received,
      (all) => all.length >= 6,
    );
    expect(received.map((m) => bodyOf(m).resourceId).sort()).toEqual([...wallets].sort());

    // webhook-timestamp is the second the attempt got its place in: the limit's window.
    const windows = received.map((m) => Number(m.headers['webhook-timestamp']));
    const perWindow = new Map<number, number>();
    for (const w of windows) perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
    expect([...perWindow.values()].every((n) => n <= 2)).toBe(true);
    const first = Math.min(...windows);
    expect(Math.max(...windows) - first).toBeGreaterThanOrEqual(2);
    // The consumer got the last of them in the third second at the earliest, never ahead of its window.
    expect(Math.max(...received.map((m) => m.receivedAt))).toBeGreaterThanOrEqual((first + 2) * 1000);
    for (const m of received) expect(m.receivedAt).toBeGreaterThanOrEqual(Number(m.headers['webhook-timestamp']) * 1000);

    // Waiting for a window is not an attempt: every webhook succeeded at its first.
    const log = await waitUntil(
      () => listOf(t, org, endpoint.id),
      (list) => list.length === 6 && list.every((w) => w.status === 'succeeded'),
    );
    expect(log.map((w) => w.attemptCount)).toEqual(Array(6).fill(1));
  });

  it('retries a RabbitMQ endpoint whose exchange does not exist on its retrySchedule, and fails the webhook naming the channel error', async () => {
    const org = await createOrganization(t);
    const absent = `nftw-test-${RUN}-absent`;
    const endpoint = await addEndpoint(t, org, '', { webhookTypes: TYPES, url: null, retrySchedule: [1, 1], destination: rabbit(absent) });
    const walletId = await createWallet(t, org);

    const failed = await webhookOf(t, org, endpoint.id, walletId, (d) => d.status === 'failed');
    expect(failed).toEqual(expect.objectContaining({ attemptCount: 3, lastResponseStatus: null }));
    expect(failed.attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    for (const a of failed.attempts) {
      expect([a.responseStatus, a.responseBody]).toEqual([null, null]);
      expect(a.error).toMatch(new RegExp(`^the broker closed the channel: .*NOT.FOUND.*no exchange '${absent}'`));
    }
    // Each retry comes 1 s (±10 %) after the previous attempt ended, as the endpoint's schedule says.
    for (let n = 1; n < failed.attempts.length; n += 1) {
      const previous = failed.attempts[n - 1];
      const ended = Date.parse(previous.startedAtUtc) + previous.durationMs;
      expect(Date.parse(failed.attempts[n].startedAtUtc) - ended).toBeGreaterThanOrEqual(900);
    }
  });

  it('switches off a broker endpoint whose every attempt failed for the window, with at least ten failed webhooks', async () => {
    const org = await createOrganization(t);
    const endpoint = await addEndpoint(t, org, '', {
      webhookTypes: TYPES,
      url: null,
      destination: rabbit(`nftw-test-${RUN}-absent-too`),
    });
    for (let i = 0; i < 10; i += 1) await createWallet(t, org, `failing ${i}`);
    await waitUntil(
      () => listOf(t, org, endpoint.id),
      (list) => list.length === 10 && list.every((w) => w.status === 'failed'),
    );
    const disabled = await waitUntil(
      async () => (await get(t, org, `${ENDPOINTS_PATH}/${endpoint.id}`)) as Record<string, unknown>,
      (e) => e.enabled === false,
      15_000,
    );
    expect(disabled).toEqual(expect.objectContaining({ enabled: false, disabledReason: 'failing' }));
    const audit = (await get(t, org, `${AUDIT_PATH}?pageSize=1000`)).entries as Record<string, unknown>[];
    expect(audit.filter((e) => e.action === 'webhookEndpoint.autoDisable' && JSON.stringify(e).includes(endpoint.id))).toHaveLength(1);
  });

  it('numbers the webhooks of an ordered RabbitMQ endpoint per resource and publishes them in event order', async () => {
    const org = await createOrganization(t);
    const exchange = track(await new RabbitExchange(`nftw-test-${RUN}-ordered`).start());
    const endpoint = await addEndpoint(t, org, '', {
      webhookTypes: TYPES,
      url: null,
      ordering: 'resource',
      destination: rabbit(exchange.name, 'ordered.{resourceId}'),
    });
    expect((await get(t, org, `${ENDPOINTS_PATH}/${endpoint.id}`)).ordering).toBe('resource');
    // Five updates of each of two resources, committed at once as a bulk import would, step by step.
    const resources = [randomUUID(), randomUUID()];
    await insertUpdates(t, org.id, resources, 5);

    const received = await waitUntil(
      () => exchange.received,
      (all) => all.length >= 10,
    );
    for (const resource of resources) {
      const mine = received.filter((m) => m.name === `ordered.${resource}`);
      expect(mine.map((m) => m.headers['x-service-webhook-sequence'])).toEqual(['1', '2', '3', '4', '5']);
      expect(mine.map((m) => (bodyOf(m).changes as { step: number }).step)).toEqual([1, 2, 3, 4, 5]);
    }
    // The delivery log shows each webhook's number, the one its message carried.
    const log = await waitUntil(
      () => listOf(t, org, endpoint.id),
      (list) => list.length === 10 && list.every((w) => w.status === 'succeeded'),
    );
    const sequenceOf = new Map(log.map((w) => [w.id, w.sequence]));
    for (const m of received) expect(sequenceOf.get(String(bodyOf(m).id))).toBe(Number(m.headers['x-service-webhook-sequence']));
    expect(received).toHaveLength(10);
  });

  it('fails a NATS attempt when no stream takes the subject: no PubAck, retried, then failed', async () => {
    const org = await createOrganization(t);
    const subject = `nftw.${RUN}.nostream.create`;
    const endpoint = await addEndpoint(t, org, '', {
      webhookTypes: TYPES,
      url: null,
      retrySchedule: [1],
      destination: { type: 'nats', url: NATS_URL, subject: `nftw.${RUN}.nostream.{action}`, stream: `NFTW_${RUN}_ABSENT` },
    });
    const walletId = await createWallet(t, org);
    const failed = await webhookOf(t, org, endpoint.id, walletId, (d) => d.status === 'failed');
    expect(failed).toEqual(expect.objectContaining({ attemptCount: 2, lastResponseStatus: null }));
    expect(failed.attempts.map((a) => [a.responseStatus, a.responseBody, a.error])).toEqual(
      Array(2).fill([null, null, `no JetStream stream takes subject "${subject}" (no responders)`]),
    );
  });
});

describe('broker endpoints under the address policy at delivery time', () => {
  it('refuses to connect to an endpoint saved while its private host was allowed, once the deployment no longer allows it', async () => {
    // The operator allowed the local RabbitMQ when the endpoint was saved...
    const before = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', DESTINATION_ALLOWED_HOSTS: '127.0.0.1:5672' });
    let running: TestApp | null = before;
    const exchange = await new RabbitExchange(`nftw-test-${RUN}-policy`).start();
    try {
      const org = await createOrganization(before);
      const endpoint = await addEndpoint(before, org, '', {
        webhookTypes: TYPES,
        url: null,
        retrySchedule: [1],
        destination: rabbit(exchange.name),
      });
      running = null;
      await before.close();
      // ... and restarted the service without it: the saved endpoint is judged again at delivery.
      const after = (running = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }));
      expect((await get(after, org, `${ENDPOINTS_PATH}/${endpoint.id}`)).destination).toEqual(
        expect.objectContaining({ type: 'rabbitmq', url: 'amqp://guest:***@127.0.0.1:5672/', exchange: exchange.name }),
      );
      const walletId = await createWallet(after, org);
      const failed = await webhookOf(after, org, endpoint.id, walletId, (d) => d.status === 'failed');
      expect(failed.attempts.length).toBeGreaterThanOrEqual(1);
      for (const a of failed.attempts) {
        expect([a.responseStatus, a.responseBody, a.error]).toEqual([null, null, `destination.url ${FORBIDDEN_TARGET_MESSAGE}`]);
      }
      expect(exchange.received).toHaveLength(0);
    } finally {
      await exchange.close();
      await running?.close();
    }
  });
});
