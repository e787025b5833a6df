import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../src/config/app-config';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { MqttSubscriber, NATS_URL, NatsStream, OwnNatsServer, RabbitExchange, RABBITMQ_URL, BrokerMessage } from './support/brokers';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp, testEnv } from './support/test-app';
import { addEndpoint, ENDPOINTS_PATH, WEBHOOKS_PATH } from './support/webhooks';

/** Unique per run, so reruns and parallel runs never share an exchange, a stream or a topic. */
const RUN = randomBytes(4).toString('hex');
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';

interface Attempt {
  attempt: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}
interface Detail {
  id: string;
  status: string;
  endpointId: string;
  eventId: string;
  attempts: Attempt[];
}

/** What a Standard Webhooks library makes of a broker message's headers and bytes (throws when they do not verify). */
function verifyStandard(message: BrokerMessage, secret: string): unknown {
  const wh = new Webhook(`whsec_${Buffer.from(secret, 'utf8').toString('base64')}`);
  return wh.verify(message.raw, {
    'webhook-id': message.headers['webhook-id'],
    'webhook-timestamp': message.headers['webhook-timestamp'],
    'webhook-signature': message.headers['webhook-signature'],
  });
}

describe('destinations beyond HTTP: RabbitMQ, NATS JetStream and MQTT 5 on the real local brokers', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' });
    receiver = await new TestReceiver().start();
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await receiver.stop();
    await t.close();
  });

  const track = <T extends { close(): Promise<void> }>(resource: T): T => (cleanups.push(() => resource.close()), resource);
  const get = async (org: TestOrganization, path: string) => (await t.http().get(path).set(bearer(org.adminKey)).expect(200)).body;
  const post = (org: TestOrganization, path: string, body: object) => t.http().post(path).set(bearer(org.adminKey)).send(body);
  const patch = (org: TestOrganization, path: string, body: object) => t.http().patch(path).set(bearer(org.adminKey)).send(body);
  const createWallet = async (org: TestOrganization, name = 'w') =>
    (await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name }).expect(201)).body.id as string;
  const webhookOf = async (org: TestOrganization, endpointId: string, resourceId: string, done: (d: Detail) => boolean) => {
    const found = await waitUntil(
      async () =>
        (await get(org, `${WEBHOOKS_PATH}?endpointId=${endpointId}&pageSize=1000`)).webhooks as { id: string; resourceId: string }[],
      (list) => list.some((w) => w.resourceId === resourceId),
    );
    const id = found.find((w) => w.resourceId === resourceId)!.id;
    return waitUntil(async () => (await get(org, `${WEBHOOKS_PATH}/${id}`)) as Detail, done, 30_000);
  };
  const rabbit = (exchange: string, routingKey = 'webhooks.{webhookType}.{action}') => ({
    type: 'rabbitmq',
    url: RABBITMQ_URL,
    exchange,
    routingKey,
  });

  it('refuses invalid destinations with a 400 naming the field, and stores nothing', async () => {
    const org = await createOrganization(t);
    const base = { webhookTypes: ['custodialAccount'], sharedSecret: 'destination-secret-0123456789' };
    const nats = { type: 'nats', url: NATS_URL, subject: 'w.{webhookType}', stream: 'S' };
    const refusals: [object, string][] = [
      [{ destination: { ...nats, type: 'kafka' } }, 'destination.type'],
      [{ destination: { ...nats, url: 'amqp://127.0.0.1:5672' } }, 'destination.url'],
      [{ destination: { ...rabbit('x'), url: 'nats://127.0.0.1:4222' } }, 'destination.url'],
      [{ destination: { ...rabbit('x'), url: 'mqtt://127.0.0.1:1883' } }, 'destination.url'],
      [{ destination: { type: 'nats', url: NATS_URL, subject: 'w' } }, 'destination.stream'],
      [{ destination: { ...nats, stream: null } }, 'destination.stream'],
      [{ destination: { ...nats, subject: 'w.*' } }, 'destination.subject'],
      [{ destination: { ...nats, subject: 'w..x' } }, 'destination.subject'],
      [{ destination: { ...nats, subject: 'w.{eventId}' } }, 'destination.subject'],
      [{ destination: { type: 'mqtt', url: 'mqtt://127.0.0.1:1883', topic: 'w/#', qos: 1 } }, 'destination.topic'],
      [{ destination: { type: 'mqtt', url: 'mqtt://127.0.0.1:1883', topic: 'w', qos: 0 } }, 'destination.qos'],
      [{ destination: { ...rabbit('x'), routingKey: 'k'.repeat(256) } }, 'destination.routingKey'],
      [{ destination: { type: 'rabbitmq', url: RABBITMQ_URL, routingKey: 'k' } }, 'destination.exchange'],
      [{ destination: rabbit('x'), url: receiver.url }, 'destination'],
      [{}, 'url'],
      [
        {
          destination: rabbit('x'),
          auth: { type: 'oauth2ClientCredentials', tokenUrl: 'https://auth.example.com/t', clientId: 'c', clientSecret: 's' },
        },
        'auth',
      ],
    ];
    for (const [body, field] of refusals) {
      const res = await post(org, ENDPOINTS_PATH, { ...base, ...body });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect([field, (res.body.errors as { field: string }[]).map((e) => e.field)]).toEqual([field, expect.arrayContaining([field])]);
    }
    expect((await get(org, ENDPOINTS_PATH)).endpoints).toHaveLength(1);

    // PATCH: both kinds at once, and a switch that leaves neither, change nothing.
    const http = await addEndpoint(t, org, receiver.url, { webhookTypes: ['custodialAccount'] });
    expectProblem(await patch(org, `${ENDPOINTS_PATH}/${http.id}`, { destination: rabbit('x') }), 400, 'VALIDATION_FAILED');
    expectProblem(await patch(org, `${ENDPOINTS_PATH}/${http.id}`, { url: null }), 400, 'VALIDATION_FAILED');
    expect(await get(org, `${ENDPOINTS_PATH}/${http.id}`)).toEqual(expect.objectContaining({ url: http.url, destination: null }));
    // The default endpoint is the webhook configuration: HTTP only.
    expectProblem(await patch(org, `${ENDPOINTS_PATH}/${org.id}`, { url: null, destination: rabbit('x') }), 422, 'DEFAULT_ENDPOINT');
  });

  it('publishes the bytes an HTTP endpoint gets, signed, under expanded templates, on all three brokers', async () => {
    const org = await createOrganization(t);
    const exchange = track(await new RabbitExchange(`nftw-test-${RUN}-bytes`).start());
    const stream = track(await new NatsStream(`NFTW_${RUN}_BYTES`, [`nftw.${RUN}.bytes.>`]).start());
    const topics = track(await new MqttSubscriber(`nftw/${RUN}/bytes/#`).start());
    const types = { webhookTypes: ['custodialAccount'] };
    await addEndpoint(t, org, receiver.urlFor(`/bytes-${RUN}`), types);
    const amqp = await addEndpoint(t, org, '', { ...types, url: null, destination: rabbit(exchange.name) });
    const nats = await addEndpoint(t, org, '', {
      ...types,
      url: null,
      destination: { type: 'nats', url: NATS_URL, subject: `nftw.${RUN}.bytes.{resourceType}.{action}`, stream: stream.name },
    });
    const mqtt = await addEndpoint(t, org, '', {
      ...types,
      url: null,
      destination: { type: 'mqtt', url: 'mqtt://127.0.0.1:1883', topic: `nftw/${RUN}/bytes/{organizationId}/{resourceId}`, qos: 1 },
    });

    const walletId = await createWallet(org);
    const [httpWebhook] = await receiver
      .waitFor((all) => all.some((w) => w.path === `/bytes-${RUN}`))
      .then((all) => all.filter((w) => w.path === `/bytes-${RUN}`));
    await waitUntil(
      () => exchange.received.length + topics.received.length,
      (n) => n >= 2,
    );
    const [fromNats] = await stream.waitForMessages(1);
    const fromRabbit = exchange.received[0];
    const fromMqtt = topics.received[0];

    // Only the per-webhook id differs from the HTTP body; the event id is shared.
    const withoutId = (raw: Buffer) => raw.toString('utf8').replace(/"id":"[0-9a-f-]{36}"/, '"id":"X"');
    for (const [message, endpoint] of [
      [fromRabbit, amqp],
      [fromNats, nats],
      [fromMqtt, mqtt],
    ] as const) {
      expect(withoutId(message.raw)).toBe(withoutId(httpWebhook.raw));
      const id = JSON.parse(message.raw.toString('utf8')).id as string;
      expect(message.headers).toEqual(
        expect.objectContaining({
          'webhook-id': id,
          'x-service-webhook-id': id,
          'x-service-webhook-event-id': httpWebhook.headers['x-service-webhook-event-id'],
          'x-service-webhook-attempt': '1',
          'content-type': 'application/json',
        }),
      );
      expect(message.headers['user-agent']).toBeUndefined();
      expect(verifyStandard(message, endpoint.secret)).toEqual(JSON.parse(message.raw.toString('utf8')));
    }
    expect(fromRabbit.name).toBe('webhooks.custodialAccount.create');
    expect(exchange.deliveries[0].properties).toEqual(
      expect.objectContaining({ deliveryMode: 2, contentType: 'application/json', messageId: JSON.parse(fromRabbit.raw.toString()).id }),
    );
    expect(fromNats.name).toBe(`nftw.${RUN}.bytes.Wallet.create`);
    expect(fromNats.headers['nats-msg-id']).toBe(JSON.parse(fromNats.raw.toString()).id);
    expect(fromMqtt.name).toBe(`nftw/${RUN}/bytes/${org.id}/${walletId}`);

    // The delivery log shows each broker's answer, and no HTTP status.
    const answers = await Promise.all(
      [amqp, nats, mqtt].map((e) => webhookOf(org, e.id, walletId, (d) => d.status === 'succeeded').then((d) => d.attempts[0])),
    );
    expect(answers.map((a) => [a.responseStatus, a.responseBody])).toEqual([
      [null, 'ack'],
      [null, JSON.stringify({ stream: stream.name, seq: 1 })],
      [null, JSON.stringify({ reasonCode: 0 })],
    ]);
  });

  it('fails an unroutable RabbitMQ message with NO_ROUTE, and names a missing exchange', async () => {
    const org = await createOrganization(t);
    const unbound = track(await new RabbitExchange(`nftw-test-${RUN}-unbound`).start({ bound: false }));
    const noRoute = await addEndpoint(t, org, '', { webhookTypes: ['custodialAccount'], url: null, destination: rabbit(unbound.name) });
    const missing = await addEndpoint(t, org, '', {
      webhookTypes: ['custodialAccount'],
      url: null,
      destination: rabbit(`nftw-test-${RUN}-absent`),
    });
    const walletId = await createWallet(org);
    const failed = await webhookOf(org, noRoute.id, walletId, (d) => d.status === 'failed');
    expect(failed.attempts).toHaveLength(3);
    expect(failed.attempts.map((a) => [a.responseStatus, a.error])).toEqual(Array(3).fill([null, 'NO_ROUTE']));
    const absent = await webhookOf(org, missing.id, walletId, (d) => d.status === 'failed');
    expect(absent.attempts[0].error).toMatch(/NOT.FOUND.*no exchange/);
  });

  it('loses nothing while a NATS server is down: webhooks written meanwhile arrive once it is back, once each', async () => {
    const server = track(await new OwnNatsServer().start());
    const stream = track(await new NatsStream(`NFTW_${RUN}_OUTAGE`, [`nftw.${RUN}.outage.>`], server.url).start());
    const org = await createOrganization(t);
    const endpoint = await addEndpoint(t, org, '', {
      webhookTypes: ['custodialAccount'],
      url: null,
      retrySchedule: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
      destination: { type: 'nats', url: server.url, subject: `nftw.${RUN}.outage.{resourceId}`, stream: stream.name },
    });
    const first = await createWallet(org, 'before');
    await stream.waitForMessages(1);

    await server.stop();
    const during = [await createWallet(org, 'during-1'), await createWallet(org, 'during-2'), await createWallet(org, 'during-3')];
    // Each has failed at least once against the stopped server before it starts again.
    for (const walletId of during) {
      // The log shows an attempt still in flight as such: wait for one that has its result.
      const detail = await webhookOf(
        org,
        endpoint.id,
        walletId,
        (d) => d.attempts.length >= 1 && !/^in flight/.test(d.attempts[0].error ?? ''),
      );
      expect(detail.attempts[0].error).toMatch(/broker connection failed|did not answer/);
    }
    await server.start();
    for (const walletId of during) await webhookOf(org, endpoint.id, walletId, (d) => d.status === 'succeeded');
    const messages = await stream.waitForMessages(4);
    const resources = messages.map((m) => JSON.parse(m.raw.toString()).resourceId as string);
    expect(resources.sort()).toEqual([first, ...during].sort());
  });

  it('lets the stream drop a redelivered copy inside its duplicate window, and sends test, redeliver and replay to brokers', async () => {
    const org = await createOrganization(t);
    const stream = track(await new NatsStream(`NFTW_${RUN}_DEDUP`, [`nftw.${RUN}.dedup.>`]).start());
    const exchange = track(await new RabbitExchange(`nftw-test-${RUN}-sends`).start());
    const nats = await addEndpoint(t, org, '', {
      webhookTypes: ['custodialAccount'],
      url: null,
      destination: { type: 'nats', url: NATS_URL, subject: `nftw.${RUN}.dedup.{action}`, stream: stream.name },
    });
    const amqp = await addEndpoint(t, org, '', { webhookTypes: ['custodialAccount'], url: null, destination: rabbit(exchange.name) });
    const walletId = await createWallet(org);
    const sent = await webhookOf(org, nats.id, walletId, (d) => d.status === 'succeeded');
    await post(org, `${WEBHOOKS_PATH}/${sent.id}/redeliver`, {}).expect(202);
    const again = await webhookOf(org, nats.id, walletId, (d) => d.attempts.length === 2 && d.status === 'succeeded');
    expect(JSON.parse(again.attempts[1].responseBody as string)).toEqual({ stream: stream.name, seq: 1, duplicate: true });
    expect(await stream.messages()).toHaveLength(1);

    // Test send, redelivery and replay reach the RabbitMQ endpoint, each with the webhook's id.
    const test = await post(org, `${ENDPOINTS_PATH}/${amqp.id}/test`, { webhookType: 'custodialAccount' }).expect(202);
    await waitUntil(
      () => exchange.received.filter((m) => JSON.parse(m.raw.toString()).id === test.body.id).length,
      (n) => n === 1,
    );
    const delivered = await webhookOf(org, amqp.id, walletId, (d) => d.status === 'succeeded');
    const copies = () => exchange.received.filter((m) => JSON.parse(m.raw.toString()).id === delivered.id).length;
    await post(org, `${WEBHOOKS_PATH}/${delivered.id}/redeliver`, {}).expect(202);
    await waitUntil(copies, (n) => n === 2);
    await webhookOf(org, amqp.id, walletId, (d) => d.status === 'succeeded' && d.attempts.length === 2);
    // The replay takes both of the endpoint's webhooks: the test one and the wallet's.
    const since = new Date(Date.now() - 60_000).toISOString();
    const replay = await post(org, `${WEBHOOKS_PATH}/replay`, { since, status: 'all', endpointId: amqp.id }).expect(202);
    expect(replay.body.count).toBe(2);
    await waitUntil(copies, (n) => n === 3);
  });

  it('never shows broker credentials: masked in answers and the audit log, absent from logs, kept by a *** PATCH', async () => {
    const password = `S3cret-${RUN}-pw`;
    const server = track(await new OwnNatsServer({ user: 'svc', pass: password }).start());
    const stream = track(
      await new NatsStream(`NFTW_${RUN}_CREDS`, [`nftw.${RUN}.creds.>`], server.url, { user: 'svc', pass: password }).start(),
    );
    const org = await createOrganization(t);
    const destination = {
      type: 'nats',
      url: `nats://svc:${password}@127.0.0.1:${server.port}`,
      subject: `nftw.${RUN}.creds.a`,
      stream: stream.name,
    };
    const masked = { ...destination, url: `nats://svc:***@127.0.0.1:${server.port}` };
    const created = await post(org, ENDPOINTS_PATH, { webhookTypes: ['custodialAccount'], destination }).expect(201);
    expect(created.body).toEqual(expect.objectContaining({ url: null, destination: masked }));
    const id = created.body.id as string;
    expect((await get(org, `${ENDPOINTS_PATH}/${id}`)).destination).toEqual(masked);
    expect((await get(org, ENDPOINTS_PATH)).endpoints[1].destination).toEqual(masked);
    const walletId = await createWallet(org);
    await webhookOf(org, id, walletId, (d) => d.status === 'succeeded');

    // GET's destination sent back, with another subject: the stored password is kept, and delivery goes on.
    const changed = await patch(org, `${ENDPOINTS_PATH}/${id}`, { destination: { ...masked, subject: `nftw.${RUN}.creds.b` } }).expect(200);
    expect(changed.body.destination).toEqual({ ...masked, subject: `nftw.${RUN}.creds.b` });
    const second = await createWallet(org);
    await webhookOf(org, id, second, (d) => d.status === 'succeeded');
    expect((await stream.waitForMessages(2)).map((m) => m.name)).toEqual([`nftw.${RUN}.creds.a`, `nftw.${RUN}.creds.b`]);

    // A wrong password: the failed attempts name the refusal, never the password.
    const wrong = `Wr0ng-${RUN}-pw`;
    await patch(org, `${ENDPOINTS_PATH}/${id}`, {
      destination: { ...destination, url: `nats://svc:${wrong}@127.0.0.1:${server.port}` },
    }).expect(200);
    const third = await createWallet(org);
    const refused = await webhookOf(org, id, third, (d) => d.status === 'failed');
    expect(refused.attempts[0].error).toMatch(/broker connection failed/i);

    const audit = JSON.stringify(await get(org, `${AUDIT_PATH}?pageSize=1000`));
    expect(audit).toContain(`nats://svc:***@127.0.0.1:${server.port}`);
    for (const text of [audit, JSON.stringify(refused), JSON.stringify(await get(org, ENDPOINTS_PATH)), t.logs.join('\n')]) {
      expect(text).not.toContain(password);
      expect(text).not.toContain(wrong);
    }
  });

  it('holds brokers to the address policy: private hosts only when listed in DESTINATION_ALLOWED_HOSTS', async () => {
    expect(() => loadConfig(testEnv({ DESTINATION_ALLOWED_HOSTS: '127.0.0.1:5672,rabbit' }))).toThrow(/DESTINATION_ALLOWED_HOSTS/);
    const strict = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', DESTINATION_ALLOWED_HOSTS: '127.0.0.1:5672' });
    try {
      const org = await createOrganization(strict);
      const body = { webhookTypes: ['custodialAccount'], sharedSecret: 'destination-secret-0123456789' };
      const allowed = await strict
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({ ...body, destination: rabbit('x') });
      expect(allowed.status).toBe(201);
      for (const url of ['nats://127.0.0.1:4222', 'nats://localhost:4222', 'nats://10.0.0.7:4222']) {
        const refused = await strict
          .http()
          .post(ENDPOINTS_PATH)
          .set(bearer(org.adminKey))
          .send({ ...body, destination: { type: 'nats', url, subject: 's', stream: 'S' } });
        expectProblem(refused, 400, 'VALIDATION_FAILED');
        expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'destination.url' })]);
      }
      // Listed as written: the same broker under another port is not.
      const otherPort = await strict
        .http()
        .post(ENDPOINTS_PATH)
        .set(bearer(org.adminKey))
        .send({ ...body, destination: { ...rabbit('x'), url: 'amqp://guest:guest@127.0.0.1:5673/' } });
      expectProblem(otherPort, 400, 'VALIDATION_FAILED');
    } finally {
      await strict.close();
    }
  });
});
