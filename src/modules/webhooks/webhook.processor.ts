import { InjectQueue } from '@nestjs/bull';
import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppConfig } from '../../config/app-config';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { DELIVER_JOB, DeliverJobData, WEBHOOK_QUEUE } from './webhook-queue';

/**
 * Thin on purpose: it hands the job to the delivery service and lets every failure propagate,
 * so Bull reschedules the job with the delay the service chose. Concurrency comes from config,
 * which is why the handler is registered here rather than with a static decorator.
 */
@Injectable()
export class WebhookProcessor implements OnApplicationBootstrap {
  constructor(
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue<DeliverJobData>,
    private readonly delivery: WebhookDeliveryService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(DELIVER_JOB, this.config.webhook.concurrency, (job: Job<DeliverJobData>) =>
      this.delivery.handle(job.data.webhookId),
    );
  }
}
