import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { formatDbTimestamp } from '../../common/time';
import { AppConfig } from '../../config/app-config';
import { WebhookConfigService } from '../webhook-config/webhook-config.service';
import { ReceiverLimiter, receiverKey } from './receiver-limiter';
import { countAttempt, webhookDeliveryLatency } from './webhook-metrics';
import { RetryLaterError } from './webhook-queue';
import { SendResult, WebhookSender } from './webhook-sender';
import { attemptLeaseMs, buildWebhookBody, furthestLegitimateAttemptMs, retryDelayMs, signWebhookBody } from './webhook.rules';

const USER_AGENT = 'nft-wallet-webhooks/1.0';
const INTERRUPTED = 'the worker stopped before the attempt completed';

type Claim =
  | { kind: 'done' }
  | { kind: 'locked' }
  | { kind: 'notDue'; dueInMs: number }
  | { kind: 'busy' }
  | {
      kind: 'claimed';
      attempt: number;
      cycleStartAttempt: number;
      payload: string;
      eventCreatedAt: Date;
      resourceType: string;
      target: { url: string | null; secret: string | null; enabled: boolean };
      receiver: string | null;
    };

interface DeliveryRow {
  id: string;
  organization_id: string;
  payload: string;
  status: string;
  resource_type: string;
  attempt_count: number;
  cycle_start_attempt: number;
  next_attempt_at: string | null;
  event_created_at: string;
}

/**
 * Judges events and makes delivery attempts. Every decision is taken under a PostgreSQL row lock
 * and recorded there, so duplicate or lost queue jobs can neither double-send nor drop a webhook.
 */
@Injectable()
export class WebhookDeliveryService implements OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly limiter: ReceiverLimiter;
  private readonly sender: WebhookSender;
  /** How long a claimed attempt keeps others away; past it, a crashed attempt is retried. */
  private readonly leaseMs: number;
  private readonly furthestAttemptMs: number;

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
    private readonly webhookConfig: WebhookConfigService,
  ) {
    this.limiter = new ReceiverLimiter(config.webhook.perReceiverConcurrency);
    this.sender = new WebhookSender({
      timeoutMs: config.webhook.timeoutMs,
      allowHttp: config.webhook.allowHttp,
      allowPrivateNetworks: config.webhook.allowPrivateNetworks,
      connectionsPerReceiver: config.webhook.perReceiverConcurrency,
    });
    this.leaseMs = attemptLeaseMs(config.webhook.timeoutMs);
    this.furthestAttemptMs = furthestLegitimateAttemptMs(config.webhook.retryScheduleMs, this.leaseMs);
  }

  /** Job entry point: judge the event if nobody has yet, then attempt delivery if one is due. */
  async handle(webhookId: string): Promise<void> {
    const knex = this.em.getKnex();
    const existing = await knex('webhook_delivery').where({ id: webhookId }).first('id');
    if (!existing && !(await this.judgeEvent(webhookId))) return;
    await this.attempt(webhookId);
  }

  /**
   * Decides, with the configuration as it is now, whether the event becomes a webhook. Returns
   * whether a delivery exists afterwards.
   */
  private async judgeEvent(eventId: string): Promise<boolean> {
    const knex = this.em.getKnex();
    const known = await knex('domain_event').where({ id: eventId }).first('organization_id');
    if (!known) return false;
    // Read before the transaction: a job never holds two pooled connections at once.
    const target = await this.webhookConfig.findDeliveryTarget(known.organization_id);
    return knex.transaction(async (trx) => {
      const locked = await trx.raw(
        `select id, organization_id, webhook_type, resource_type, resource_id, action, changes, created_at
           from domain_event where id = ? and processed_at is null for update skip locked`,
        [eventId],
      );
      const event = locked.rows[0];
      if (!event) {
        const delivery = await trx('webhook_delivery').where({ id: eventId }).first('id');
        if (delivery) return true;
        const pending = await trx('domain_event').where({ id: eventId }).whereNull('processed_at').first('id');
        if (pending) throw new RetryLaterError(200, 'another worker is judging this event');
        return false;
      }
      const isTest = event.resource_type === 'WebhookTest';
      const subscribed = target !== null && target.enabled && target.webhookTypes.includes(event.webhook_type);
      const deliver = target !== null && target.url !== null && (isTest || subscribed);
      if (deliver) {
        await trx('webhook_delivery').insert({
          id: event.id,
          created_at: new Date(),
          organization_id: event.organization_id,
          webhook_type: event.webhook_type,
          resource_type: event.resource_type,
          resource_id: event.resource_id,
          action: event.action,
          payload: buildWebhookBody({
            organizationId: event.organization_id,
            action: event.action,
            id: event.id,
            resourceId: event.resource_id,
            resourceType: event.resource_type,
            createdAtUtc: formatDbTimestamp(event.created_at),
            changes: event.changes,
          }),
          event_created_at: event.created_at,
          status: 'pending',
          attempt_count: 0,
          cycle_start_attempt: 0,
          next_attempt_at: new Date(),
        });
      }
      await trx('domain_event').where({ id: eventId }).update({ processed_at: new Date() });
      return deliver;
    });
  }

  private async claim(id: string): Promise<Claim> {
    const knex = this.em.getKnex();
    const known = await knex('webhook_delivery').where({ id }).first('organization_id', 'status');
    if (!known || known.status !== 'pending') return { kind: 'done' };
    // Read at send time, never stored in the job: the newest url and secret always apply. Read
    // before the transaction so a job never holds two pooled connections at once.
    const config = await this.webhookConfig.findDeliveryTarget(known.organization_id);
    return knex.transaction(async (trx): Promise<Claim> => {
      const locked = await trx.raw(
        `select id, organization_id, payload, status, resource_type, attempt_count, cycle_start_attempt, next_attempt_at, event_created_at
           from webhook_delivery where id = ? for update skip locked`,
        [id],
      );
      const row: DeliveryRow | undefined = locked.rows[0];
      if (!row) return { kind: 'locked' };
      if (row.status !== 'pending') return { kind: 'done' };
      // Raw queries return timestamps as PostgreSQL text.
      const dueInMs = row.next_attempt_at ? new Date(row.next_attempt_at).getTime() - Date.now() : 0;
      // Further ahead than anything this service schedules: a skewed clock wrote it, so it is due.
      if (dueInMs > 50 && dueInMs <= this.furthestAttemptMs) return { kind: 'notDue', dueInMs };

      const target = { url: config?.url ?? null, secret: config?.sharedSecret ?? null, enabled: config?.enabled ?? false };
      let receiver: string | null = null;
      try {
        receiver = target.url ? receiverKey(target.url) : null;
      } catch {
        receiver = null;
      }
      if (receiver && !this.limiter.tryAcquire(receiver)) return { kind: 'busy' };

      const attempt = row.attempt_count + 1;
      const now = new Date();
      try {
        await trx('webhook_delivery')
          .where({ id })
          .update({ attempt_count: attempt, last_attempt_at: now, next_attempt_at: new Date(now.getTime() + this.leaseMs) });
        await trx('webhook_attempt').insert({
          delivery_id: id,
          attempt,
          started_at: now,
          duration_ms: 0,
          response_status: null,
          error: INTERRUPTED,
        });
      } catch (error) {
        if (receiver) this.limiter.release(receiver);
        throw error;
      }
      return {
        kind: 'claimed',
        attempt,
        cycleStartAttempt: row.cycle_start_attempt,
        payload: row.payload,
        eventCreatedAt: new Date(row.event_created_at),
        resourceType: row.resource_type,
        target,
        receiver,
      };
    });
  }

  private async attempt(id: string): Promise<void> {
    const claim = await this.claim(id);
    switch (claim.kind) {
      case 'done':
      case 'locked':
        return;
      case 'notDue':
        throw new RetryLaterError(claim.dueInMs, 'not due yet');
      case 'busy':
        // No attempt was made: come back shortly without spending one of the schedule's attempts.
        throw new RetryLaterError(100 + Math.round(Math.random() * 400), 'receiver has its maximum of webhooks in flight');
      case 'claimed':
        break;
    }

    let result: SendResult;
    try {
      result = await this.send(id, claim);
    } finally {
      if (claim.receiver) this.limiter.release(claim.receiver);
    }
    countAttempt(result.outcome);

    const now = new Date();
    const failedInCycle = claim.attempt - claim.cycleStartAttempt;
    const delay = result.outcome === 'success' ? null : retryDelayMs(this.config.webhook.retryScheduleMs, failedInCycle);
    await this.em.getKnex().transaction(async (trx) => {
      await trx('webhook_attempt')
        .where({ delivery_id: id, attempt: claim.attempt })
        .update({ duration_ms: result.durationMs, response_status: result.status, error: result.error });
      await trx('webhook_delivery')
        .where({ id })
        .update(
          result.outcome === 'success'
            ? { status: 'succeeded', succeeded_at: now, next_attempt_at: null, last_response_status: result.status }
            : {
                status: delay === null ? 'failed' : 'pending',
                next_attempt_at: delay === null ? null : new Date(now.getTime() + delay),
                last_response_status: result.status,
              },
        );
    });

    if (result.outcome === 'success') {
      webhookDeliveryLatency.observe((now.getTime() - claim.eventCreatedAt.getTime()) / 1000);
      return;
    }
    if (delay === null) {
      this.logger.warn({ webhookId: id, attempts: claim.attempt, error: result.error }, 'webhook failed after its last attempt');
      return;
    }
    throw new RetryLaterError(delay, result.error ?? 'delivery failed');
  }

  private async send(id: string, claim: Extract<Claim, { kind: 'claimed' }>): Promise<SendResult> {
    const { url, secret, enabled } = claim.target;
    if (!url || !secret) {
      return { outcome: 'blocked', status: null, error: 'the webhook configuration has no url or shared secret', durationMs: 0 };
    }
    if (!enabled && claim.resourceType !== 'WebhookTest') {
      return { outcome: 'blocked', status: null, error: 'the webhook configuration is disabled', durationMs: 0 };
    }
    return this.sender.send(url, claim.payload, {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': USER_AGENT,
      'x-service-webhook-hmac': signWebhookBody(secret, claim.payload),
      'x-service-webhook-id': id,
      'x-service-webhook-attempt': String(claim.attempt),
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.sender.close();
  }
}
