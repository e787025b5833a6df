import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { formatDbTimestamp } from '../../common/time';
import { AppConfig } from '../../config/app-config';
import { openSecret } from '../webhook-config/secret-box';
import { ReceiverLimiter, receiverKey } from './receiver-limiter';
import { countAttempt, webhookDeliveryLatency } from './webhook-metrics';
import { RetryLaterError } from './webhook-queue';
import { SendResult, WebhookSender } from './webhook-sender';
import { attemptLeaseMs, buildWebhookBody, furthestLegitimateAttemptMs, retryDelayMs, signWebhookBody } from './webhook.rules';

const USER_AGENT = 'nft-wallet-webhooks/1.0';
const INTERRUPTED = 'the worker stopped before the attempt completed';
/** A receiver whose sends typically finish within this is worth waiting a moment for when at its limit. */
const FAST_RECEIVER_MS = 100;
/**
 * Long enough for every job of both lanes queued on one fast receiver to get a slot at a few
 * hundred sends per second; a wait that times out gives its claim back, which costs a write.
 */
const MAX_SLOT_WAIT_MS = 1000;

/** Everything a job needs to decide, read in one statement (raw timestamps are PostgreSQL text). */
interface StateRow {
  event_organization_id: string | null;
  event_pending: boolean | null;
  webhook_type: string | null;
  event_resource_type: string | null;
  resource_id: string | null;
  action: string | null;
  changes: Record<string, unknown> | null;
  event_created_at: string | null;
  delivery_id: string | null;
  status: string | null;
  payload: string | null;
  delivery_resource_type: string | null;
  attempt_count: number | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivery_event_created_at: string | null;
  url: string | null;
  enabled: boolean | null;
  webhook_types: string[] | string | null;
  shared_secret_sealed: string | null;
  config_organization_id: string | null;
}

interface Target {
  url: string | null;
  secret: string | null;
  enabled: boolean;
  webhookTypes: string[];
}

interface Claimed {
  attempt: number;
  cycleStartAttempt: number;
  payload: string;
  eventCreatedAt: Date;
  resourceType: string;
  target: Target;
  receiver: string | null;
}

const STATE_SQL = `select e.organization_id as event_organization_id, e.processed_at is null as event_pending,
       e.webhook_type, e.resource_type as event_resource_type, e.resource_id, e.action, e.changes,
       e.created_at as event_created_at,
       d.id as delivery_id, d.status, d.payload, d.resource_type as delivery_resource_type, d.attempt_count,
       d.last_attempt_at, d.next_attempt_at, d.event_created_at as delivery_event_created_at,
       c.url, c.enabled, c.webhook_types, c.shared_secret_sealed, c.organization_id as config_organization_id
  from (select ?::uuid as id) k
  left join domain_event e on e.id = k.id
  left join webhook_delivery d on d.id = k.id
  left join webhook_config c on c.organization_id = coalesce(d.organization_id, e.organization_id)`;

/**
 * Marks the event judged and creates its delivery in one statement; the update's row lock makes
 * a concurrent judge of the same event wait and then find it processed. With `claim`, the
 * delivery starts as claimed by this worker (attempt 1 recorded as interrupted until its result
 * is known), exactly as a separate claim would leave it.
 */
const JUDGE_AND_CLAIM_SQL = `with ev as (
    update domain_event set processed_at = ? where id = ? and processed_at is null returning id
  ), d as (
    insert into webhook_delivery (id, created_at, organization_id, webhook_type, resource_type, resource_id, action,
      payload, event_created_at, status, attempt_count, cycle_start_attempt, last_attempt_at, next_attempt_at)
    select ev.id, ?, ?, ?, ?, ?, ?, ?, ?::timestamptz, 'pending', ?, 0, ?, ? from ev
    returning id, attempt_count
  ), a as (
    insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
    select d.id, d.attempt_count, ?, 0, null, ? from d where d.attempt_count > 0
  )
  select count(*)::int as judged from ev`;

/**
 * Claims the next attempt of an existing delivery if nobody else did since it was read: the
 * attempt count is the version, so two workers can never claim the same attempt.
 */
const CLAIM_SQL = `with d as (
    update webhook_delivery set attempt_count = attempt_count + 1, last_attempt_at = ?, next_attempt_at = ?
     where id = ? and status = 'pending' and attempt_count = ?
     returning id, attempt_count, cycle_start_attempt
  ), a as (
    insert into webhook_attempt (delivery_id, attempt, started_at, duration_ms, response_status, error)
    select d.id, d.attempt_count, ?, 0, null, ? from d
  )
  select attempt_count, cycle_start_attempt from d`;

/** Gives back an attempt claimed for a receiver that then had no free slot: no request was made. */
const UNCLAIM_SQL = `with d as (
    update webhook_delivery set attempt_count = attempt_count - 1, last_attempt_at = ?::timestamptz, next_attempt_at = ?::timestamptz
     where id = ? and attempt_count = ?
     returning id
  )
  delete from webhook_attempt where delivery_id in (select id from d) and attempt = ?`;

const RECORD_SUCCESS_SQL = `with a as (
    update webhook_attempt set duration_ms = ?, response_status = ?, error = ? where delivery_id = ? and attempt = ?
  )
  update webhook_delivery set status = 'succeeded', succeeded_at = ?, next_attempt_at = null, last_response_status = ?
   where id = ?`;

const RECORD_FAILURE_SQL = `with a as (
    update webhook_attempt set duration_ms = ?, response_status = ?, error = ? where delivery_id = ? and attempt = ?
  )
  update webhook_delivery set status = ?, next_attempt_at = ?, last_response_status = ?
   where id = ?`;

/**
 * Judges events and makes delivery attempts. Every decision is a single atomic statement in
 * PostgreSQL, guarded so that duplicate or lost queue jobs can neither double-send nor drop a
 * webhook. A new event takes three round trips (read, judge and claim, record result); each
 * statement commits on its own, so no connection is held across the HTTP request, and a
 * receiver slot is held only while its request is in flight.
 */
@Injectable()
export class WebhookDeliveryService implements OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly limiter: ReceiverLimiter;
  private readonly sender: WebhookSender;
  /** How long a claimed attempt keeps others away; past it, a crashed attempt is retried. */
  private readonly leaseMs: number;
  private readonly furthestAttemptMs: number;
  /** Opened secrets by sealed value: the configuration is still read fresh for every webhook. */
  private readonly secrets = new Map<string, string>();

  constructor(
    private readonly em: EntityManager,
    private readonly config: AppConfig,
  ) {
    this.limiter = new ReceiverLimiter(config.webhook.perReceiverConcurrency, {
      fastReceiverMs: FAST_RECEIVER_MS,
      maxWaitMs: MAX_SLOT_WAIT_MS,
    });
    this.sender = new WebhookSender({
      timeoutMs: config.webhook.timeoutMs,
      allowHttp: config.webhook.allowHttp,
      allowPrivateNetworks: config.webhook.allowPrivateNetworks,
      allowedPorts: config.webhook.allowedPorts,
      connectionsPerReceiver: config.webhook.perReceiverConcurrency,
    });
    this.leaseMs = attemptLeaseMs(config.webhook.timeoutMs);
    this.furthestAttemptMs = furthestLegitimateAttemptMs(config.webhook.retryScheduleMs, this.leaseMs);
  }

  /** Job entry point: judge the event if nobody has yet, then attempt delivery if one is due. */
  async handle(webhookId: string): Promise<void> {
    const state = (await this.query<StateRow>(STATE_SQL, [webhookId]))[0];
    const claimed = state.delivery_id === null ? await this.judge(webhookId, state) : await this.claim(webhookId, state);
    if (claimed) await this.deliver(webhookId, claimed);
  }

  /**
   * Decides, with the configuration as it is now, whether the event becomes a webhook, and if so
   * claims its first attempt in the same statement when the receiver has a free slot.
   */
  private async judge(eventId: string, state: StateRow): Promise<Claimed | null> {
    if (state.event_organization_id === null || !state.event_pending) return null;
    const organizationId = state.event_organization_id;
    const target = this.targetOf(state);
    const isTest = state.event_resource_type === 'WebhookTest';
    const subscribed = target.enabled && target.webhookTypes.includes(state.webhook_type as string);
    const now = new Date();
    if (target.url === null || !(isTest || subscribed)) {
      await this.query('update domain_event set processed_at = ? where id = ? and processed_at is null', [now, eventId]);
      return null;
    }

    const payload = buildWebhookBody({
      organizationId,
      action: state.action as string,
      id: eventId,
      resourceId: state.resource_id as string,
      resourceType: state.event_resource_type as string,
      createdAtUtc: formatDbTimestamp(state.event_created_at as string),
      changes: state.changes,
    });
    const receiver = receiverOf(target.url);
    const slot = this.planSlot(receiver);
    const claim = slot !== 'none';
    const claimedAt = new Date();
    let judged: number;
    try {
      const rows = await this.query<{ judged: number }>(JUDGE_AND_CLAIM_SQL, [
        now,
        eventId,
        now,
        organizationId,
        state.webhook_type,
        state.event_resource_type,
        state.resource_id,
        state.action,
        payload,
        state.event_created_at,
        claim ? 1 : 0,
        claim ? claimedAt : null,
        claim ? new Date(claimedAt.getTime() + this.leaseMs) : now,
        claimedAt,
        INTERRUPTED,
      ]);
      judged = rows[0].judged;
    } catch (error) {
      if (slot === 'held' && receiver) this.limiter.release(receiver);
      throw error;
    }
    if (judged === 0) {
      if (slot === 'held' && receiver) this.limiter.release(receiver);
      // Another worker judged it between our read and our write; its outcome is in PostgreSQL.
      throw new RetryLaterError(200, 'another worker judged this event');
    }
    if (!claim) throw busy();
    if (slot === 'afterClaim' && !(await this.limiter.waitForSlot(receiver as string))) {
      await this.query(UNCLAIM_SQL, [null, now, eventId, 1, 1]);
      throw busy();
    }
    return {
      attempt: 1,
      cycleStartAttempt: 0,
      payload,
      eventCreatedAt: new Date(state.event_created_at as string),
      resourceType: state.event_resource_type as string,
      target,
      receiver,
    };
  }

  /** The next attempt of an existing delivery, if it is pending and due and the receiver has room. */
  private async claim(id: string, state: StateRow): Promise<Claimed | null> {
    if (state.status !== 'pending') return null;
    // Raw queries return timestamps as PostgreSQL text.
    const dueInMs = state.next_attempt_at ? new Date(state.next_attempt_at).getTime() - Date.now() : 0;
    // Further ahead than anything this service schedules: a skewed clock wrote it, so it is due.
    if (dueInMs > 50 && dueInMs <= this.furthestAttemptMs) throw new RetryLaterError(dueInMs, 'not due yet');

    // Read at send time, never stored in the job: the newest url and secret always apply.
    const target = this.targetOf(state);
    const receiver = target.url ? receiverOf(target.url) : null;
    const slot = this.planSlot(receiver);
    if (slot === 'none') throw busy();

    const now = new Date();
    let rows: { attempt_count: number; cycle_start_attempt: number }[];
    try {
      rows = await this.query(CLAIM_SQL, [now, new Date(now.getTime() + this.leaseMs), id, state.attempt_count, now, INTERRUPTED]);
    } catch (error) {
      if (slot === 'held' && receiver) this.limiter.release(receiver);
      throw error;
    }
    if (rows.length === 0) {
      // Claimed, finished or changed by someone else since it was read: their job carries it on.
      if (slot === 'held' && receiver) this.limiter.release(receiver);
      return null;
    }
    if (slot === 'afterClaim' && !(await this.limiter.waitForSlot(receiver as string))) {
      await this.query(UNCLAIM_SQL, [state.last_attempt_at, state.next_attempt_at, id, rows[0].attempt_count, rows[0].attempt_count]);
      throw busy();
    }
    return {
      attempt: rows[0].attempt_count,
      cycleStartAttempt: rows[0].cycle_start_attempt,
      payload: state.payload as string,
      eventCreatedAt: new Date(state.delivery_event_created_at as string),
      resourceType: state.delivery_resource_type as string,
      target,
      receiver,
    };
  }

  private async deliver(id: string, claim: Claimed): Promise<void> {
    let result: SendResult;
    try {
      result = await this.send(id, claim);
    } finally {
      if (claim.receiver) this.limiter.release(claim.receiver, result! && result.outcome !== 'blocked' ? result.durationMs : undefined);
    }
    countAttempt(result.outcome);

    const now = new Date();
    const failedInCycle = claim.attempt - claim.cycleStartAttempt;
    const delay = result.outcome === 'success' ? null : retryDelayMs(this.config.webhook.retryScheduleMs, failedInCycle);
    const attemptColumns = [result.durationMs, result.status, result.error, id, claim.attempt];
    if (result.outcome === 'success') {
      await this.query(RECORD_SUCCESS_SQL, [...attemptColumns, now, result.status, id]);
      webhookDeliveryLatency.observe((now.getTime() - claim.eventCreatedAt.getTime()) / 1000);
      return;
    }
    await this.query(RECORD_FAILURE_SQL, [
      ...attemptColumns,
      delay === null ? 'failed' : 'pending',
      delay === null ? null : new Date(now.getTime() + delay),
      result.status,
      id,
    ]);
    if (delay === null) {
      this.logger.warn({ webhookId: id, attempts: claim.attempt, error: result.error }, 'webhook failed after its last attempt');
      return;
    }
    throw new RetryLaterError(delay, result.error ?? 'delivery failed');
  }

  private async send(id: string, claim: Claimed): Promise<SendResult> {
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

  /**
   * A receiver slot now ('held'), or, for a receiver at its limit that answers fast, right after
   * the attempt is claimed ('afterClaim'): the slot is then held only while the request is in
   * flight, not across the claim's round trip, and a slot that does not free in time gives the
   * claim back. A slow or unknown receiver at its limit gets no attempt now ('none').
   */
  private planSlot(receiver: string | null): 'held' | 'afterClaim' | 'none' {
    if (receiver === null || this.limiter.tryAcquire(receiver)) return 'held';
    return this.limiter.isFast(receiver) ? 'afterClaim' : 'none';
  }

  /** The organization's configuration as read with the job's state; no row means the defaults (disabled). */
  private targetOf(state: StateRow): Target {
    if (state.config_organization_id === null) return { url: null, secret: null, enabled: false, webhookTypes: [] };
    return {
      url: state.url,
      secret: state.shared_secret_sealed === null ? null : this.openSecret(state.shared_secret_sealed, state.config_organization_id),
      enabled: state.enabled === true,
      webhookTypes: parseTextArray(state.webhook_types),
    };
  }

  private openSecret(sealed: string, organizationId: string): string {
    const cacheKey = `${organizationId}:${sealed}`;
    let plain = this.secrets.get(cacheKey);
    if (plain === undefined) {
      plain = openSecret(sealed, this.config.secretsEncryptionKey, organizationId);
      if (this.secrets.size >= 1000) this.secrets.clear();
      this.secrets.set(cacheKey, plain);
    }
    return plain;
  }

  private async query<T>(sql: string, bindings: unknown[]): Promise<T[]> {
    const result = await this.em.getKnex().raw(sql, bindings as never[]);
    return result.rows as T[];
  }

  async onModuleDestroy(): Promise<void> {
    await this.sender.close();
  }
}

/** No attempt was made: come back shortly without spending one of the schedule's attempts. */
function busy(): RetryLaterError {
  return new RetryLaterError(100 + Math.round(Math.random() * 400), 'receiver has its maximum of webhooks in flight');
}

function receiverOf(url: string): string | null {
  try {
    return receiverKey(url);
  } catch {
    return null;
  }
}

/** text[] arrives parsed from pg, or as its literal (`{a,b}`) when no array parser is registered. */
function parseTextArray(value: string[] | string | null): string[] {
  if (value === null) return [];
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((item) => item.replace(/^"|"$/g, ''));
}
