import { EntityManager } from '@mikro-orm/postgresql';
import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { v7 as uuidv7 } from 'uuid';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { notFound, unprocessable } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { formatUtc } from '../../common/time';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { AuditService } from '../audit/audit.service';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { DeliveryTargetReader } from '../webhook-config/delivery-target.reader';
import { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { deliverJobOptions, DELIVER_JOB, DeliverJobData, WEBHOOK_QUEUE } from './webhook-queue';
import { buildWebhookBody } from './webhook.rules';

const ENQUEUE_TIMEOUT_MS = 1000;

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
  ) {}

  async page(organizationId: string, status: DeliveryStatus | undefined, pageSize: number, pageKey?: string): Promise<Page<WebhookDelivery>> {
    const before = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.deliveries.page(organizationId, status, before, pageSize + 1);
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
    await this.requireDeliverableConfig(key.organizationId);
    await this.em.transactional(async (em) => {
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

  /** A WebhookTest webhook to the configured url, whatever the enabled switch and type filter say. */
  async sendTest(key: ApiKeyPrincipal, requestedType: WebhookType | undefined, meta: RequestMeta): Promise<string> {
    const target = await this.requireDeliverableConfig(key.organizationId);
    const webhookType = requestedType ?? target.webhookTypes[0] ?? 'nft';
    const id = await this.em.transactional(async (em) => {
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
        endpointId: key.organizationId,
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
        changes: { webhookId: { from: null, to: event.id }, webhookType: { from: null, to: webhookType } },
      });
      return event.id;
    });
    await this.enqueue(id);
    return id;
  }

  private async requireDeliverableConfig(organizationId: string) {
    const target = await this.targets.target(organizationId);
    if (!target.url || (target.secret === null && target.secretError === null)) {
      throw unprocessable('WEBHOOK_CONFIG_INCOMPLETE', 'Set the webhook url and sharedSecret first.');
    }
    return target;
  }

  /**
   * Best effort: when Redis is unavailable the row is already pending and due in PostgreSQL, and
   * the reconciler enqueues it once Redis is back.
   */
  private async enqueue(id: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.queue.add(DELIVER_JOB, { webhookId: id }, deliverJobOptions(id)),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('queue unavailable')), ENQUEUE_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      this.logger.warn({ err: error, webhookId: id }, 'could not enqueue now; the reconciler will');
    } finally {
      clearTimeout(timer);
    }
  }
}
