import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config';
import { WebhookBatchExecutor } from './batch-executor';
import { WebhookJobs } from './webhook-jobs';

/**
 * Thin on purpose: it hands each job to the delivery engine and lets every failure propagate,
 * so Bull reschedules the job with the delay the engine chose. Concurrency comes from config,
 * which is why the handler is registered here rather than with a static decorator.
 */
@Injectable()
export class WebhookProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly jobs: WebhookJobs,
    private readonly executor: WebhookBatchExecutor,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.process(this.config.webhook.concurrency, {
      judgeEvents: (job) => this.executor.judgeEvents(job),
      attemptWebhook: (job) => this.executor.attemptWebhook(job),
    });
  }
}
