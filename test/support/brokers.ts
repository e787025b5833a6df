import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as amqpConnect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { connect as mqttConnect, type MqttClient } from 'mqtt';
import { connect as natsConnect, type NatsConnection } from 'nats';
import { waitUntil } from './receiver';

/*
 * The real brokers of this machine (RabbitMQ 127.0.0.1:5672 guest/guest, NATS with JetStream
 * 127.0.0.1:4222, Mosquitto 127.0.0.1:1883), seen from the consumer's side, and a nats-server a
 * suite runs itself to stop and restart. Names are unique per run; whatever a helper creates it
 * deletes in `close`.
 */

export const RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672/';
export const NATS_URL = 'nats://127.0.0.1:4222';
export const MQTT_URL = 'mqtt://127.0.0.1:1883';

/** One message as a consumer gets it: the exact bytes, the headers, and the name it was published under. */
export interface BrokerMessage {
  raw: Buffer;
  headers: Record<string, string>;
  /** Routing key, subject or topic. */
  name: string;
  /** When the consumer got it (RabbitMQ, MQTT) or the stream stored it (NATS), in epoch ms. */
  receivedAt: number;
}

/** A topic exchange on the local RabbitMQ with one queue bound to `#` (or none: unroutable). */
export class RabbitExchange {
  readonly received: BrokerMessage[] = [];
  readonly deliveries: ConsumeMessage[] = [];
  private model: ChannelModel | null = null;

  constructor(readonly name: string) {}

  async start(options: { bound: boolean } = { bound: true }): Promise<this> {
    this.model = await amqpConnect(RABBITMQ_URL);
    const channel = await this.model.createChannel();
    await channel.assertExchange(this.name, 'topic', { durable: false, autoDelete: false });
    if (options.bound) {
      const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
      await channel.bindQueue(queue, this.name, '#');
      await channel.consume(
        queue,
        (message) => {
          if (message === null) return;
          this.deliveries.push(message);
          this.received.push({
            raw: message.content,
            headers: stringHeaders(message.properties.headers ?? {}),
            name: message.fields.routingKey,
            receivedAt: Date.now(),
          });
        },
        { noAck: true },
      );
    }
    return this;
  }

  async close(): Promise<void> {
    if (!this.model) return;
    const channel = await this.model.createChannel();
    await channel.deleteExchange(this.name).catch(() => undefined);
    await this.model.close().catch(() => undefined);
    this.model = null;
  }
}

/** A JetStream stream on a NATS server, read back message by message. */
export class NatsStream {
  private connection: NatsConnection | null = null;

  constructor(
    readonly name: string,
    readonly subjects: string[],
    readonly server = NATS_URL,
    private readonly auth: { user: string; pass: string } | null = null,
  ) {}

  async start(): Promise<this> {
    this.connection = await natsConnect({ servers: new URL(this.server).host, ...(this.auth ?? {}) });
    const jsm = await this.connection.jetstreamManager();
    await jsm.streams.add({ name: this.name, subjects: this.subjects, duplicate_window: 120_000_000_000 });
    return this;
  }

  /** Every message the stream holds, in order. */
  async messages(): Promise<BrokerMessage[]> {
    const jsm = await this.connection!.jetstreamManager();
    const info = await jsm.streams.info(this.name);
    const out: BrokerMessage[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq += 1) {
      const stored = await jsm.streams.getMessage(this.name, { seq });
      const headers: Record<string, string> = {};
      for (const [name] of stored.header ?? []) headers[name.toLowerCase()] = stored.header.get(name);
      out.push({ raw: Buffer.from(stored.data), headers, name: stored.subject, receivedAt: stored.time.getTime() });
    }
    return out;
  }

  async waitForMessages(count: number, timeoutMs = 15_000): Promise<BrokerMessage[]> {
    return waitUntil(
      // A server the suite restarted takes a moment to take this client back: read again until it has.
      () => this.messages().catch(() => []),
      (messages) => messages.length >= count,
      timeoutMs,
    );
  }

  async close(): Promise<void> {
    if (!this.connection) return;
    const jsm = await this.connection.jetstreamManager();
    await jsm.streams.delete(this.name).catch(() => undefined);
    await this.connection.close();
    this.connection = null;
  }
}

/** An MQTT 5 subscriber on the local Mosquitto. */
export class MqttSubscriber {
  readonly received: BrokerMessage[] = [];
  private client: MqttClient | null = null;

  constructor(readonly filter: string) {}

  async start(): Promise<this> {
    const client = mqttConnect(MQTT_URL, { protocolVersion: 5, clean: true });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    client.on('message', (topic, payload, packet) => {
      const properties = (packet.properties?.userProperties ?? {}) as Record<string, string | string[]>;
      const headers = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k.toLowerCase(), [v].flat().join(',')]));
      this.received.push({ raw: Buffer.from(payload), headers, name: topic, receivedAt: Date.now() });
    });
    await client.subscribeAsync(this.filter, { qos: 1 });
    this.client = client;
    return this;
  }

  async close(): Promise<void> {
    await this.client?.endAsync(true);
    this.client = null;
  }
}

/** A nats-server with JetStream that this suite owns: stopped and started again on the same port and store. */
export class OwnNatsServer {
  private process: ChildProcess | null = null;
  private readonly storeDir = mkdtempSync(join(tmpdir(), 'nats-store-'));
  port = 0;

  constructor(private readonly auth: { user: string; pass: string } | null = null) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    if (this.port === 0) this.port = await freePort();
    const args = ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir];
    if (this.auth) args.push('--user', this.auth.user, '--pass', this.auth.pass);
    this.process = spawn('/usr/sbin/nats-server', args, { stdio: 'ignore' });
    await waitUntil(
      () => canConnect(this.port),
      (up) => up,
      15_000,
    );
    return this;
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    this.process = null;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

function stringHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Buffer.isBuffer(v) ? v.toString('utf8') : String(v)]),
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return natsConnect({ servers: `127.0.0.1:${port}`, timeout: 500, reconnect: false, ignoreAuthErrorAbort: true }).then(
    async (nc) => (await nc.close(), true),
    (error: { code?: string }) => error.code === 'AUTHORIZATION_VIOLATION',
  );
}
