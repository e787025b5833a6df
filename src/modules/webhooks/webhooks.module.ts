import { MikroOrmModule } from '@mikro-orm/nestjs';
import { BullModule, InjectQueue } from '@nestjs/bull';
import { DynamicModule, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown, Provider } from '@nestjs/common';
import type { Queue } from 'bull';
import { OrganizationSendLimiter } from '../../common/rate-limit/organization-send-limit';
import { AuditModule } from '../audit/audit.module';
import { DomainEventOutbox } from '../domain-events/domain-event.outbox';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { WebhookConfigModule } from '../webhook-config/webhook-config.module';
import { OutboxRelay } from './outbox-relay.service';
import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { registerOutboxLagSampler, registerQueueDepthSampler } from './webhook-metrics';
import { WEBHOOK_BULK_QUEUE, WEBHOOK_QUEUE } from './webhook-queue';
import { WebhookReconciler } from './webhook-reconciler.service';
import { WebhookStatsController } from './webhook-stats.controller';
import { WebhookStatsReader } from './webhook-stats.reader';
import { WebhookStatsService } from './webhook-stats.service';
import { WebhookProcessor } from './webhook.processor';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Feeds the queue-depth and outbox-lag gauges of /metrics from this process. */
@Injectable()
class WebhookMetricsSampler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly unregister: (() => void)[] = [];

  constructor(
    @InjectQueue(WEBHOOK_QUEUE) private readonly queue: Queue,
    @InjectQueue(WEBHOOK_BULK_QUEUE) private readonly bulkQueue: Queue,
    private readonly outbox: DomainEventOutbox,
  ) {}

  onApplicationBootstrap(): void {
    this.unregister.push(
      registerQueueDepthSampler(async () => {
        const [main, bulk] = await Promise.all([this.queue.getJobCounts(), this.bulkQueue.getJobCounts()]);
        const counts: Record<string, number> = { ...main };
        for (const [state, value] of Object.entries(bulk as unknown as Record<string, number>))
          counts[state] = (counts[state] ?? 0) + value;
        return counts;
      }),
      registerOutboxLagSampler(() => this.outbox.lagSeconds()),
    );
  }

  onApplicationShutdown(): void {
    this.unregister.forEach((fn) => fn());
  }
}

@Module({})
export class WebhooksModule {
  /** `worker` adds the processor, the outbox relay and the reconciler (ROLE=worker|all). */
  static register(options: { worker: boolean }): DynamicModule {
    const workerProviders: Provider[] = options.worker ? [WebhookDeliveryService, WebhookProcessor, OutboxRelay, WebhookReconciler] : [];
    return {
      module: WebhooksModule,
      imports: [
        MikroOrmModule.forFeature([WebhookDelivery, WebhookAttempt]),
        BullModule.registerQueue({ name: WEBHOOK_QUEUE }, { name: WEBHOOK_BULK_QUEUE }),
        DomainEventsModule,
        WebhookConfigModule,
        AuditModule,
      ],
      // WebhookStatsController first: its `webhooks/stats` must be matched before `webhooks/:webhookId`.
      controllers: [WebhookStatsController, WebhooksController],
      providers: [
        WebhooksService,
        OrganizationSendLimiter,
        WebhookStatsService,
        WebhookStatsReader,
        WebhookMetricsSampler,
        ...workerProviders,
      ],
    };
  }
}
