import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { DeliveryTargetReader } from './delivery-target.reader';
import { PreviousSecretCleanup } from './previous-secret-cleanup.service';
import { WebhookConfigController } from './webhook-config.controller';
import { WebhookConfigService } from './webhook-config.service';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';

/** Owns the webhook endpoints (the default one included), their secrets and who they are sent to. */
@Module({
  imports: [MikroOrmModule.forFeature([WebhookEndpoint]), AuditModule],
  controllers: [WebhookConfigController, WebhookEndpointsController],
  providers: [WebhookConfigService, WebhookEndpointsService, DeliveryTargetReader, PreviousSecretCleanup],
  exports: [WebhookEndpointsService, DeliveryTargetReader],
})
export class WebhookEndpointsModule {}
