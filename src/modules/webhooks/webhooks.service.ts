import { EntityManager } from '@mikro-orm/postgresql';
import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { v7 as uuidv7 } from 'uuid';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { notFound, unprocessable, validationFailed } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { formatUtc } from '../../common/time';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { AuditService } from '../audit/audit.service';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { DeliveryTarget, DeliveryTargetReader } from '../webhook-config/delivery-target.reader';
import { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import type { ReplayStatus } from './dto/webhook.dto';
import { deliverJobOptions, DELIVER_JOB, DeliverJobData, WEBHOOK_QUEUE } from './webhook-queue';
import { buildWebhookBody } from './webhook.rules';
import { OrganizationSendLimiter } from '../../common/rate-limit/organization-send-limit';

const ENQUEUE_TIMEOUT_MS = 1000;
/** Webhooks one replay may send again (CONTRACT.md section 12). */
export const MAX_REPLAY = 10_000;
/** Jobs per Redis round trip when a replay queues its webhooks. */
const ENQUEUE_CHUNK = 500;

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
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly em: EntityManager,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly targets: DeliveryTargetReader,
    private readonly publisher: DomainEventPublisher,
    private readonly audit: AuditService,
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<DeliverJobData>,
    private readonly sendLimit: OrganizationSendLimiter,
  ) {}

  async page(
    organizationId: string,
    filter: { status?: DeliveryStatus; endpointId?: string },
    pageSize: number,
    pageKey?: string,
  ): Promise<Page<WebhookDelivery>> {
    const before = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.deliveries.page(organizationId, filter, before, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }

  async get(organizationId: string, id: string) {
    const delivery = await this.deliveries.findInOrganization(organizationId, id);
    if (!delivery) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${id} does not exist.`);
    return { delivery, attempts: await this.deliveries.attempts(id) };
  }

  /** Sends the same id and body again, re-signed with the current secret, with a fresh retry cycle. */
  async redeliver(key: ApiKeyPrincipal, id: string, meta: RequestMeta): Promise<string> {
    const delivery = await this.deliveries.findInOrganization(key.organizationId, id);
    if (!delivery) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${id} does not exist.`);
    const endpoint = await this.targets.endpoint(key.organizationId, delivery.endpointId);
    if (!endpoint) throw unprocessable('WEBHOOK_ENDPOINT_DELETED', `The endpoint of webhook ${id} was deleted; it cannot be sent again.`);
    requireDeliverable(endpoint);
    await this.em.transactional((em) => {
      const previous = delivery.status;
      delivery.status = 'pending';
      delivery.cycleStartAttempt = delivery.attemptCount;
      delivery.nextAttemptAt = new Date();
      em.persist(delivery);
      this.audit.record(em, {
        organizationId: key.organizationId,
        action: 'webhook.redeliver',
        actor: key,
        meta,
        changes: { webhookId: { from: null, to: id }, status: { from: previous, to: 'pending' } },
      });
    });
    await this.enqueue(id);
    return id;
  }

  /**
   * Sends every webhook a replay selects again (each with its own id and body, re-signed at send
   * time): a fresh retry cycle for each, due now, in one statement with its audit entry. Refused
   * as a whole when it selects more than MAX_REPLAY.
   */
  async replay(key: ApiKeyPrincipal, input: ReplayRequest, meta: RequestMeta): Promise<number> {
    const since = new Date(input.since);
    const until = input.until ? new Date(input.until) : new Date();
    if (since.getTime() >= until.getTime()) throw validationFailed([{ field: 'until', message: 'until must be later than since' }]);
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
    // The route's guard counted one send; a replay costs one per webhook it queues.
    await this.sendLimit.charge(key.organizationId, ids.length - 1);
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
    for (let i = 0; i < restarted.length; i += ENQUEUE_CHUNK) await this.enqueue(restarted.slice(i, i + ENQUEUE_CHUNK));
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
    const id = await this.em.transactional((em) => {
      const event = this.publisher.publish(em, key.organizationId, {
        webhookType,
        resourceType: 'WebhookTest',
        action: 'test',
        resourceId: uuidv7(),
        changes: null,
      });
      // Judged here rather than by the worker: a test goes out even while webhooks are disabled,
      // and the caller can read its log entry at once.
      event.processedAt = new Date();
      const delivery = em.create(WebhookDelivery, {
        id: event.id,
        eventId: event.id,
        endpointId,
        createdAt: new Date(),
        organizationId: key.organizationId,
        webhookType,
        resourceType: event.resourceType,
        resourceId: event.resourceId,
        action: event.action,
        payload: buildWebhookBody({ ...event, createdAtUtc: formatUtc(event.createdAt), changes: null }),
        eventCreatedAt: event.createdAt,
        status: 'pending',
        attemptCount: 0,
        cycleStartAttempt: 0,
        lastAttemptAt: null,
        nextAttemptAt: new Date(),
        lastResponseStatus: null,
        succeededAt: null,
      });
      em.persist(delivery);
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
    await this.enqueue(id);
    return id;
  }

  /**
   * Best effort: when Redis is unavailable the row is already pending and due in PostgreSQL, and
   * the reconciler enqueues it once Redis is back.
   */
  private async enqueue(ids: string | readonly string[]): Promise<void> {
    const list = typeof ids === 'string' ? [ids] : ids;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.queue.addBulk(list.map((id) => ({ name: DELIVER_JOB, data: { webhookId: id }, opts: deliverJobOptions(id) }))),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('queue unavailable')), ENQUEUE_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      this.logger.warn({ err: error, webhookIds: list.slice(0, 10), count: list.length }, 'could not enqueue now; the reconciler will');
    } finally {
      clearTimeout(timer);
    }
  }
}

/** An endpoint a webhook can be sent to by hand: it needs a url and a secret. */
function requireDeliverable(target: DeliveryTarget): DeliveryTarget {
  if (!target.url || (target.secret === null && target.secretError === null)) {
    throw unprocessable('WEBHOOK_CONFIG_INCOMPLETE', 'Set the webhook url and sharedSecret first.');
  }
  return target;
}
