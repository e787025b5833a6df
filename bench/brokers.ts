import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from 'nats';
import type { Client } from 'pg';
import { percentile, round, sleep } from './bench-kit';

/*
 * The 20,000-webhook burst to one RabbitMQ destination and to one JetStream destination, beside
 * the HTTP burst of the same run (one worker each, the same events committed at once). The
 * brokers are the machine's (RabbitMQ 127.0.0.1:5672, NATS with JetStream 127.0.0.1:4222); the
 * exchange, queue and stream are the run's own and deleted after. Counted on the consumer's side:
 * a RabbitMQ consumer on a queue bound to the exchange, the JetStream stream's message count.
 */

export const RABBITMQ_URL = process.env.BENCH_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672/';
export const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';

interface Burst {
  events: number;
  delivered: number;
  seconds: number;
  deliveriesPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  duplicates: number;
  badSignatures: number;
}

export interface BrokersInput {
  db: Client;
  runId: string;
  events: number;
  /** A fresh organization with an admin key. */
  createOrg: (name: string) => Promise<{ id: string; key: string }>;
  addEndpoint: (key: string, body: object) => Promise<{ id: string }>;
  /** SQL committing `count` transaction events for organization $1. */
  insertSql: (count: number) => string;
  /** The HTTP figure of this run: one measured burst to one HTTP endpoint. */
  httpBurst: () => Promise<Burst & { cpuMsPerWebhook: number }>;
  /** measureCpu of the service's process around `run`. */
  measure: (run: () => Promise<Burst>) => Promise<Burst & { cpuMsPerWebhook: number }>;
  log: (line: string) => void;
}

/** Commits `events` events in one transaction and waits until `arrived()` counts them all; `arrivals` gives each one's time. */
async function brokerBurst(
  input: BrokersInput,
  organizationId: string,
  events: number,
  arrived: () => Promise<number>,
  arrivals: () => number[],
): Promise<Burst> {
  const before = await arrived();
  await input.db.query('begin');
  await input.db.query(input.insertSql(events), [organizationId]);
  await input.db.query('commit');
  const committedAt = Date.now();
  const deadline = committedAt + 240_000;
  let count = before;
  let lastAt = committedAt;
  while (count - before < events) {
    if (Date.now() > deadline) throw new Error(`only ${count - before} of ${events} messages arrived in 240 s`);
    await sleep(20);
    const now = await arrived();
    if (now !== count) lastAt = Date.now();
    count = now;
  }
  const latencies = arrivals()
    .slice(-events)
    .map((at) => at - committedAt);
  const seconds = (lastAt - committedAt) / 1000;
  return {
    events,
    delivered: count - before,
    seconds: round(seconds, 2),
    deliveriesPerSecond: round((count - before) / seconds, 1),
    latencyP50Ms: latencies.length ? percentile(latencies, 50) : NaN,
    latencyP99Ms: latencies.length ? percentile(latencies, 99) : NaN,
    duplicates: Math.max(0, count - before - events),
    badSignatures: 0,
  };
}

export async function brokersScenario(input: BrokersInput) {
  const { events, log, runId } = input;
  log(`brokers: HTTP burst of ${events} webhooks to one endpoint, one worker (the figure beside the brokers)`);
  const http = await input.httpBurst();
  log(`  HTTP: ${http.deliveriesPerSecond} webhooks/s, ${http.cpuMsPerWebhook} CPU ms per webhook`);

  // RabbitMQ: a topic exchange, one queue bound to everything, consumed without acks (counting only).
  const exchange = `nftw-bench-${runId}`;
  const model = await amqpConnect(RABBITMQ_URL);
  const channel = await model.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: false });
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, exchange, '#');
  const rabbitArrivals: number[] = [];
  await channel.consume(queue, () => rabbitArrivals.push(Date.now()), { noAck: true });
  const rabbitOrg = await input.createOrg(`bench rabbitmq ${runId}`);
  await input.addEndpoint(rabbitOrg.key, {
    webhookTypes: ['transaction'],
    destination: { type: 'rabbitmq', url: RABBITMQ_URL, exchange, routingKey: 'webhooks.{webhookType}.{action}' },
  });

  // JetStream: a stream of the run's subjects, counted by its state.
  const stream = `NFTW_BENCH_${runId.toUpperCase()}`;
  const nc = await natsConnect({ servers: new URL(NATS_URL).host });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: stream, subjects: [`nftw.bench.${runId}.>`] });
  const natsArrivals: number[] = [];
  const natsCount = async () => {
    const n = (await jsm.streams.info(stream)).state.messages;
    while (natsArrivals.length < n) natsArrivals.push(Date.now());
    return n;
  };
  const natsOrg = await input.createOrg(`bench nats ${runId}`);
  await input.addEndpoint(natsOrg.key, {
    webhookTypes: ['transaction'],
    destination: { type: 'nats', url: NATS_URL, subject: `nftw.bench.${runId}.{webhookType}.{action}`, stream },
  });

  try {
    const rabbitCount = () => Promise.resolve(rabbitArrivals.length);
    log(`brokers: warming up the RabbitMQ and JetStream paths (${Math.round(events / 5)} webhooks each)`);
    await brokerBurst(input, rabbitOrg.id, Math.round(events / 5), rabbitCount, () => rabbitArrivals);
    await brokerBurst(input, natsOrg.id, Math.round(events / 5), natsCount, () => natsArrivals);
    await input.db.query('vacuum analyze domain_event, webhook_delivery, webhook_attempt');

    log(`brokers: ${events} webhooks to one RabbitMQ destination, one worker`);
    const rabbitmq = await input.measure(() => brokerBurst(input, rabbitOrg.id, events, rabbitCount, () => rabbitArrivals));
    log(
      `  RabbitMQ: ${rabbitmq.deliveriesPerSecond} webhooks/s, ${rabbitmq.cpuMsPerWebhook} CPU ms per webhook, p99 ${rabbitmq.latencyP99Ms} ms`,
    );
    await input.db.query('vacuum analyze domain_event, webhook_delivery, webhook_attempt');
    log(`brokers: ${events} webhooks to one JetStream destination, one worker`);
    const jetstream = await input.measure(() => brokerBurst(input, natsOrg.id, events, natsCount, () => natsArrivals));
    log(
      `  JetStream: ${jetstream.deliveriesPerSecond} webhooks/s, ${jetstream.cpuMsPerWebhook} CPU ms per webhook, p99 ${jetstream.latencyP99Ms} ms`,
    );
    const ratio = (m: Burst) => round(m.deliveriesPerSecond / http.deliveriesPerSecond, 3);
    return {
      events,
      http,
      rabbitmq: { ...rabbitmq, throughputRatio: ratio(rabbitmq), goal: 1 },
      jetstream: { ...jetstream, throughputRatio: ratio(jetstream), goal: 1 },
    };
  } finally {
    await channel.deleteExchange(exchange).catch(() => undefined);
    await model.close().catch(() => undefined);
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  }
}
