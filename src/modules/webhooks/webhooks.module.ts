// The webhooks module owns webhook_delivery, webhook_attempt and webhook_endpoint_health, and its two Bull queues.
import { MikroOrmModule } from '@mikro-orm/nestjs';
import { BullModule } from '@nestjs/bull';
import { DynamicModule, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown, Provider } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { OrganizationReplayBudget } from '../../common/rate-limit/organization-send-limit';
import { AuditModule } from '../audit/audit.module';
import { DomainEventStore } from '../domain-events/domain-event.store';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { WebhookEndpointsModule } from '../webhook-endpoints/webhook-endpoints.module';
import { AttemptRequests } from './engine/attempt-request';
import { AttemptResults } from './engine/attempt-results';
import { AttemptRunner } from './engine/attempt-runner';
import { AttemptSlots } from './engine/attempt-slots';
import { WebhookBatchExecutor } from './engine/batch-executor';
import { OutboxEvents } from './engine/outbox/outbox-events';
import { OutboxRelay } from './engine/outbox/outbox-relay.service';
import { DeliveryClaimRepository } from './delivery-claim.repository';
import { DeliveryMaintenanceRepository } from './delivery-maintenance.repository';
import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { registerOutboxLagSampler, registerQueueDepthSampler } from './engine/webhook-metrics';
import { WEBHOOK_BULK_QUEUE, WEBHOOK_QUEUE, WebhookJobs, webhookQueueSettings } from './engine/webhook-jobs';
import { WebhookReconciler } from './maintenance/webhook-reconciler.service';
import { WebhookStatsController } from './stats/webhook-stats.controller';
import { WebhookStatsReader } from './stats/webhook-stats.reader';
import { WebhookStatsService } from './stats/webhook-stats.service';
import { WebhookProcessor } from './engine/webhook.processor';
import { WebhooksController } from './api/webhooks.controller';
import { WebhooksService } from './api/webhooks.service';
import { DeliveryLogResources } from './api/delivery-log-resources';

/** Feeds the queue-depth and outbox-lag gauges of /metrics from this process. */
@Injectable()
class WebhookMetricsSampler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly unregister: (() => void)[] = [];

  constructor(
    private readonly jobs: WebhookJobs,
    private readonly events: DomainEventStore,
  ) {}

  onApplicationBootstrap(): void {
    this.unregister.push(
      registerQueueDepthSampler(() => this.jobs.counts()),
      registerOutboxLagSampler(() => this.events.lagSeconds()),
    );
  }

  onApplicationShutdown(): void {
    this.unregister.forEach((fn) => fn());
  }
}

@Module({})
export class WebhooksModule {
  /** `worker` adds the engine (batch executor, attempt runner and their parts), the processor, the outbox relay and the reconciler (ROLE=worker|all). */
  static register(options: { worker: boolean }): DynamicModule {
    const workerProviders: Provider[] = options.worker
      ? [
          AttemptSlots,
          AttemptRequests,
          AttemptResults,
          AttemptRunner,
          WebhookBatchExecutor,
          WebhookProcessor,
          OutboxRelay,
          WebhookReconciler,
        ]
      : [];
    return {
      module: WebhooksModule,
      imports: [
        MikroOrmModule.forFeature([WebhookDelivery, WebhookAttempt]),
        // This module owns its queues' settings (locks, stalled jobs, the retry backoff); the root
        // queue module only says where Redis is.
        BullModule.registerQueueAsync(
          ...[WEBHOOK_QUEUE, WEBHOOK_BULK_QUEUE].map((name) => ({
            name,
            inject: [AppConfig],
            useFactory: (config: AppConfig) => ({ settings: webhookQueueSettings(config) }),
          })),
        ),
        DomainEventsModule,
        WebhookEndpointsModule,
        AuditModule,
      ],
      // WebhookStatsController first: its `webhooks/stats` must be matched before `webhooks/:webhookId`.
      controllers: [WebhookStatsController, WebhooksController],
      providers: [
        WebhookJobs,
        DeliveryClaimRepository,
        DeliveryMaintenanceRepository,
        OutboxEvents,
        WebhooksService,
        OrganizationReplayBudget,
        WebhookStatsService,
        WebhookStatsReader,
        WebhookMetricsSampler,
        DeliveryLogResources,
        ...workerProviders,
      ],
    };
  }
}
