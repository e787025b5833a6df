import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module, OnModuleInit } from '@nestjs/common';
import { EventResources } from '../domain-events/event-resources';
import { WebhookEndpointDto } from './dto/webhook-endpoint.response.dto';
import { AuditModule } from '../audit/audit.module';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { DeliveryTargetReader } from './delivery-target.reader';
import { PreviousSecretCleanup } from './previous-secret-cleanup.service';
import { WebhookConfigController } from './webhook-config.controller';
import { WebhookConfigService } from './webhook-config.service';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';

/** Owns the webhook endpoints (the default one included), their secrets and who they are sent to. */
@Module({
  imports: [MikroOrmModule.forFeature([WebhookEndpoint]), AuditModule, DomainEventsModule],
  controllers: [WebhookConfigController, WebhookEndpointsController],
  providers: [WebhookConfigService, WebhookEndpointsService, DeliveryTargetReader, PreviousSecretCleanup],
  exports: [WebhookEndpointsService, DeliveryTargetReader],
})
export class WebhookEndpointsModule implements OnModuleInit {
  constructor(
    private readonly resources: EventResources,
    private readonly endpoints: WebhookEndpointsService,
  ) {}

  /** `operational` events about an endpoint show it as GET …/webhook-endpoints/{id} answers. */
  onModuleInit(): void {
    this.resources.register('WebhookEndpoint', async (organizationId, ids) => {
      const found = new Map<string, unknown>();
      for (const id of ids) {
        const view = await this.endpoints.find(organizationId, id);
        if (view) found.set(id, WebhookEndpointDto.from(view));
      }
      return found;
    });
  }
}
