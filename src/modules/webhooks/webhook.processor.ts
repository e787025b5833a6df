import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppConfig } from '../../config/app-config';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { DELIVER_JOB, DeliverJobData, WEBHOOK_BULK_QUEUE, WEBHOOK_QUEUE } from './webhook-queue';

/**
 * Thin on purpose: it hands the job to the delivery service and lets every failure propagate,
 * so Bull reschedules the job with the delay the service chose. Concurrency comes from config,
 * which is why the handler is registered here rather than with a static decorator.
 */
@Injectable()
export class WebhookProcessor implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhookProcessor');

  constructor(
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<DeliverJobData>,
    @InjectQueue(WEBHOOK_BULK_QUEUE) private readonly bulkQueue: Queue<DeliverJobData>,
    private readonly delivery: WebhookDeliveryService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const handle = (job: Job<DeliverJobData>) =>
      job.data.webhookIds ? this.delivery.handleGroup(job.data.webhookIds) : this.delivery.handle(job.data.webhookId as string);
    // Each lane has the full concurrency: the bulk lane must not slow a burst down, only keep
    // it out of the way of other organizations' webhooks.
    for (const queue of [this.queue, this.bulkQueue]) {
      // Bull's run loop rejects when Redis fails before it is ready (or the app stops meanwhile);
      // left unheard, that rejection would crash the process instead of being reported.
      queue
        .process(DELIVER_JOB, this.config.webhook.concurrency, handle)
        .catch((error: unknown) => this.logger.error({ err: error, queue: queue.name }, 'webhook queue processing stopped'));
    }
  }
}
