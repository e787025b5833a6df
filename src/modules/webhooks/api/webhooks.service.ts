import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { RequestMeta } from '../../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../../common/auth/principal';
import { notFound, unprocessable, validationFailed } from '../../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../../common/pagination/page-key';
import { formatUtc } from '../../../common/time';
import { Page, toPage } from '../../../common/pagination/page-query.dto';
import { AppConfig } from '../../../config/app-config';
import { AuditService } from '../../audit/audit.service';
import type { WebhookType } from '../../domain-events/domain-event.catalogue';
import { DomainEventPublisher } from '../../domain-events/domain-event.publisher';
import { DeliveryTarget, DeliveryTargetReader } from '../../webhook-endpoints/delivery-target.reader';
import { DeliveryStatus, WebhookDelivery } from '../webhook-delivery.entity';
import { WebhookDeliveryRepository } from '../webhook-delivery.repository';
import type { ReplayStatus } from './webhook.dto';
import { OutboxEvents } from '../engine/outbox/outbox-events';
import { WebhookJobs } from '../engine/webhook-jobs';
import { buildWebhookBody, hasReceiver } from '../engine/webhook.rules';
import { OrganizationReplayBudget } from '../../../common/rate-limit/organization-send-limit';

/** Webhooks one replay may send again (docs/WEBHOOKS.md "Several endpoints: fan-out, filters, replay, auto-disable"). */
export const MAX_REPLAY = 10_000;

/** The delivery log's filters, as the API takes them (instants as ISO 8601 text). */
export interface DeliveryLogFilter {
  status?: DeliveryStatus;
  endpointId?: string;
  webhookTypes?: WebhookType[];
  since?: string;
  until?: string;
}

export interface ReplayRequest {
  since: string;
  until?: string;
  status?: ReplayStatus;
  endpointId?: string;
  webhookTypes?: WebhookType[];
}

/** The delivery log, redelivery and test sends: what an organization admin sees and does. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly em: EntityManager,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly targets: DeliveryTargetReader,
    private readonly publisher: DomainEventPublisher,
    private readonly outbox: OutboxEvents,
    private readonly audit: AuditService,
    private readonly jobs: WebhookJobs,
    private readonly replayBudget: OrganizationReplayBudget,
    private readonly config: AppConfig,
  ) {}

  async page(organizationId: string, filter: DeliveryLogFilter, pageSize: number, pageKey?: string): Promise<Page<WebhookDelivery>> {
    const since = filter.since ? new Date(filter.since) : undefined;
    const until = filter.until ? new Date(filter.until) : undefined;
    if (since && until && since.getTime() >= until.getTime()) {
      throw validationFailed([{ field: 'until', message: 'until must be later than since' }]);
    }
    const before = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.deliveries.page(organizationId, { ...filter, since, until }, before, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }

  async get(organizationId: string, id: string) {
    const entry = await this.find(organizationId, id);
    if (!entry) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${id} does not exist.`);
    return entry;
  }

  /** A delivery log entry with its attempts; null when the organization has no such webhook. */
  async find(organizationId: string, id: string) {
    const delivery = await this.deliveries.findInOrganization(organizationId, id);
    return delivery ? { delivery, attempts: await this.deliveries.attempts(delivery) } : null;
  }

  /** Sends the same id and body again, re-signed with the current secret, with a fresh retry cycle. */
  async redeliver(key: ApiKeyPrincipal, id: string, meta: RequestMeta): Promise<string> {
    const delivery = await this.deliveries.findInOrganization(key.organizationId, id);
    if (!delivery) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${id} does not exist.`);
    const endpoint = await this.targets.endpoint(key.organizationId, delivery.endpointId);
    if (!endpoint) throw unprocessable('WEBHOOK_ENDPOINT_DELETED', `The endpoint of webhook ${id} was deleted; it cannot be sent again.`);
    requireDeliverable(endpoint);
    await this.em.transactional(async (em) => {
      const previous = delivery.status;
      await em.getRepository(WebhookDelivery).restartCycles(key.organizationId, [id], new Date(), { evenIfPending: true });
      this.audit.record(em, {
        organizationId: key.organizationId,
        action: 'webhook.redeliver',
        actor: key,
        meta,
        changes: { webhookId: { from: null, to: id }, status: { from: previous, to: 'pending' } },
      });
    });
    await this.jobs.offerWebhooks([id]);
    return id;
  }

  /**
   * Sends every webhook a replay selects again (each with its own id and body, re-signed at send
   * time): a fresh retry cycle for each, due now, in one statement with its audit entry. Refused
   * as a whole when it selects more than MAX_REPLAY, or more than is left of the organization's
   * replay budget (WEBHOOK_REPLAYS_PER_HOUR).
   */
  async replay(key: ApiKeyPrincipal, input: ReplayRequest, meta: RequestMeta): Promise<number> {
    const since = new Date(input.since);
    const until = input.until ? new Date(input.until) : new Date();
    if (since.getTime() >= until.getTime()) throw validationFailed([{ field: 'until', message: 'until must be later than since' }]);
    const keptSince = Date.now() - this.config.webhook.retentionMs;
    if (since.getTime() < keptSince) {
      throw unprocessable(
        'OUTSIDE_RETENTION',
        `Webhooks are kept for ${this.config.webhook.retentionMs / 86_400_000} days; since must be ${formatUtc(new Date(keptSince))} or later.`,
      );
    }
    if (input.endpointId && !(await this.targets.endpoint(key.organizationId, input.endpointId))) {
      throw notFound('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${input.endpointId} does not exist.`);
    }
    const status = input.status ?? 'failed';
    const ids = await this.deliveries.replayable(
      key.organizationId,
      {
        since,
        until,
        statuses: status === 'all' ? ['failed', 'succeeded'] : ['failed'],
        endpointId: input.endpointId,
        webhookTypes: input.webhookTypes,
      },
      MAX_REPLAY + 1,
    );
    if (ids.length > MAX_REPLAY) {
      throw unprocessable(
        'REPLAY_TOO_LARGE',
        `The replay selects more than ${MAX_REPLAY} webhooks; narrow the time window or the filters.`,
      );
    }
    // Replays' own budget, counted in the webhooks they queue (never the send limit of test sends).
    await this.replayBudget.charge(key.organizationId, ids.length);
    const restarted = await this.em.transactional(async (em) => {
      const done = await em.getRepository(WebhookDelivery).restartCycles(key.organizationId, ids, new Date());
      this.audit.record(em, {
        organizationId: key.organizationId,
        action: 'webhook.replay',
        actor: key,
        meta,
        changes: {
          since: { from: null, to: formatUtc(since) },
          until: { from: null, to: formatUtc(until) },
          status: { from: null, to: status },
          endpointId: { from: null, to: input.endpointId ?? null },
          webhookTypes: { from: null, to: input.webhookTypes ?? null },
          count: { from: null, to: done.length },
        },
      });
      return done;
    });
    await this.jobs.offerWebhooks(restarted);
    return restarted.length;
  }

  /**
   * A WebhookTest webhook to one endpoint (the default one unless named), whatever its enabled
   * switch and type filter say.
   */
  async sendTest(
    key: ApiKeyPrincipal,
    requestedType: WebhookType | undefined,
    meta: RequestMeta,
    endpointId = key.organizationId,
  ): Promise<string> {
    const endpoint = await this.targets.endpoint(key.organizationId, endpointId);
    if (!endpoint) throw notFound('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${endpointId} does not exist.`);
    const target = requireDeliverable(endpoint);
    const webhookType = requestedType ?? target.webhookTypes[0] ?? 'nft';
    const id = await this.em.transactional(async (em) => {
      const [event] = await this.publisher.publishMany(em, key.organizationId, [
        { webhookType, resourceType: 'WebhookTest', action: 'test', resourceId: uuidv7(), changes: null },
      ]);
      // Judged here rather than by the worker, through the same statements: a test goes out even
      // while webhooks are disabled, and the caller can read its log entry at once.
      const trx = em.getTransactionContext<Knex.Transaction>() as Knex.Transaction;
      const now = new Date();
      // A test has no resource: a full body carries `data: null`.
      const data = target.payload === 'full' ? null : undefined;
      const payload = buildWebhookBody({ ...event, createdAtUtc: formatUtc(event.createdAt), changes: null, data });
      const row = {
        ...event,
        eventId: event.id,
        endpointId,
        payload,
        eventCreatedAt: event.createdAt.toISOString(),
        claimed: false,
        ordered: target.ordering === 'resource',
      };
      await this.outbox.judge(trx, [{ eventId: event.id, webhooks: [row] }], now, now);
      this.audit.record(em, {
        organizationId: key.organizationId,
        action: 'webhook.test',
        actor: key,
        meta,
        changes: {
          webhookId: { from: null, to: event.id },
          webhookType: { from: null, to: webhookType },
          ...(endpointId === key.organizationId ? {} : { endpointId: { from: null, to: endpointId } }),
        },
      });
      return event.id;
    });
    await this.jobs.offerWebhooks([id]);
    return id;
  }
}

/** An endpoint a webhook can be sent to by hand: it needs a url and a secret. */
function requireDeliverable(target: DeliveryTarget): DeliveryTarget {
  if (!hasReceiver(target) || (target.secret === null && target.secretError === null)) {
    throw unprocessable('WEBHOOK_CONFIG_INCOMPLETE', 'Set the webhook url and sharedSecret first.');
  }
  return target;
}
