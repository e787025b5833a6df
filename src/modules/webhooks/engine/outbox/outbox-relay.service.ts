import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Client, type Notification } from 'pg';
import { inSpan } from '../../../../common/tracing/tracing';
import { AppConfig } from '../../../../config/app-config';
import { knexTransaction } from '../../../../database/raw-sql';
import { DomainEventStore } from '../../../domain-events/domain-event.store';
import { BurstTracker } from '../burst-tracker';
import { BURST_THRESHOLD, WebhookJobs } from '../webhook-jobs';

const BATCH_SIZE = 500;
/** Payloads of the start-up check that notifications reach the listener (never an event's). */
const CHECK_PREFIX = 'listen-check:';
/** How long the start-up check waits for its own notification: normally a few milliseconds. */
const CHECK_WAIT_MS = 5000;

/** Interleaves organizations so one organization's burst does not queue ahead of everyone else. */
export function interleaveByOrganization<T extends { organizationId: string }>(rows: T[]): T[] {
  const byOrg = new Map<string, T[]>();
  for (const row of rows) {
    const list = byOrg.get(row.organizationId);
    if (list) list.push(row);
    else byOrg.set(row.organizationId, [row]);
  }
  const lists = [...byOrg.values()];
  const out: T[] = [];
  for (let i = 0; out.length < rows.length; i += 1) {
    for (const list of lists) if (i < list.length) out.push(list[i]);
  }
  return out;
}

/**
 * Moves committed domain events to the queue. PostgreSQL NOTIFY (sent by a trigger, delivered at
 * commit) wakes it the moment an event is visible; a poll every OUTBOX_POLL_INTERVAL catches
 * anything a lost notification or a Redis outage left behind, and carries the relay alone where
 * notifications cannot arrive (a transaction pooler in place of DATABASE_DIRECT_URL). Rows are
 * claimed with FOR UPDATE SKIP LOCKED, so any number of workers relay side by side without double
 * work, and an event is marked relayed only once Redis has accepted its job.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OutboxRelay');
  private listener: Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** Set once LISTEN proved useless (a transaction pooler in the way): polling alone from then on. */
  private pollingOnly = false;
  private checked = false;
  private readonly bursts = new BurstTracker(BURST_THRESHOLD);

  constructor(
    private readonly em: EntityManager,
    private readonly events: DomainEventStore,
    private readonly config: AppConfig,
    private readonly jobs: WebhookJobs,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), this.config.webhook.relayIntervalMs);
    this.timer.unref();
    void this.listen();
    this.kick();
  }

  /** Runs a relay pass now, or right after the one in progress. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'relay pass failed; the next pass retries'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    while (!this.stopped && (await this.relayBatch()) === BATCH_SIZE) {
      // keep going while full batches come back
    }
  }

  /**
   * Claims up to a batch of committed events not yet relayed, queues their jobs, and marks them
   * relayed in the same transaction only once Redis took the jobs: a failed enqueue leaves them
   * for the next pass. Returns how many were relayed.
   */
  async relayBatch(): Promise<number> {
    return knexTransaction(this.em, async (trx) => {
      const events = await this.events.claimUnrelayed(trx, BATCH_SIZE);
      if (events.length === 0) return 0;
      const lanes = { main: [] as string[], bulk: [] as string[] };
      for (const event of interleaveByOrganization(events)) lanes[this.bursts.lane(event.organizationId)].push(event.id);
      // One span per batch moved, linked to the trace of each request that wrote one of its events.
      await inSpan(
        'outbox.relay',
        { kind: 'producer', links: events.map((e) => e.traceparent), attributes: { 'outbox.events': events.length } },
        () => this.jobs.addRelayed(lanes),
      );
      await this.events.markRelayed(
        trx,
        events.map((e) => e.id),
        new Date(),
      );
      return events.length;
    });
  }

  /**
   * LISTENs over DATABASE_DIRECT_URL: a session that must stay with one server connection, which
   * a transaction-pooling PgBouncer does not give (DATABASE_URL may point at one).
   */
  private async listen(): Promise<void> {
    if (this.stopped || this.pollingOnly) return;
    const client = new Client({ connectionString: this.config.databaseDirectUrl, application_name: 'nft-wallet-listen' });
    client.on('notification', (message) => {
      if (!message.payload?.startsWith(CHECK_PREFIX)) this.kick();
    });
    client.on('error', () => undefined);
    client.on('end', () => {
      if (this.listener === client) this.listener = null;
      // Reconnect; meanwhile the periodic poll keeps events flowing.
      if (!this.stopped && !this.pollingOnly) setTimeout(() => void this.listen(), 1000).unref();
    });
    try {
      await client.connect();
      await client.query('LISTEN domain_event');
      this.listener = client;
      this.kick();
    } catch (error) {
      this.logger.warn({ err: error }, 'could not listen for domain events; relying on polling');
      await client.end().catch(() => undefined);
      return;
    }
    if (!this.checked) {
      this.checked = true;
      await this.checkNotificationsArrive(client);
    }
  }

  /**
   * Once per process: announces a notification of its own through the service's pool and waits
   * for it on the listener. Behind a transaction-pooling PgBouncer the LISTEN ran on whichever
   * server connection was free and went back to the pool with it, so nothing ever arrives; that
   * is the one sure sign, whatever the pooler or its settings (plain PostgreSQL and a pooler
   * look alike to every query). A check that cannot even be sent proves nothing and warns of
   * nothing.
   */
  private async checkNotificationsArrive(client: Client): Promise<void> {
    const payload = `${CHECK_PREFIX}${randomUUID()}`;
    let timer: NodeJS.Timeout | undefined;
    let onNotification: ((message: Notification) => void) | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      onNotification = (message) => {
        if (message.payload === payload) resolve(true);
      };
      client.on('notification', onNotification);
      timer = setTimeout(() => resolve(false), CHECK_WAIT_MS);
      timer.unref();
    });
    try {
      await this.events.announce(payload);
    } catch {
      clearTimeout(timer);
      client.off('notification', onNotification!);
      return;
    }
    const ok = await arrived;
    clearTimeout(timer);
    client.off('notification', onNotification!);
    if (ok || this.stopped) return;
    this.pollingOnly = true;
    this.logger.warn(
      'LISTEN receives no notifications over DATABASE_DIRECT_URL (a transaction-pooling PgBouncer?): set DATABASE_DIRECT_URL ' +
        'to a direct PostgreSQL connection. Until then domain events are relayed by polling every ' +
        `${this.config.webhook.relayIntervalMs} ms, and the advisory locks of maintenance work are unreliable.`,
    );
    if (this.listener === client) this.listener = null;
    await client.query('UNLISTEN *').catch(() => undefined);
    await client.end().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
    await this.running;
  }
}
