import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { DeliveryTargetReader } from './delivery-target.reader';
import { PreviousSecretCleanup } from './previous-secret-cleanup.service';
import { WebhookConfigController } from './webhook-config.controller';
import { WebhookConfig } from './webhook-config.entity';
import { WebhookConfigService } from './webhook-config.service';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';

@Module({
  imports: [MikroOrmModule.forFeature([WebhookConfig, WebhookEndpoint]), AuditModule],
  controllers: [WebhookConfigController, WebhookEndpointsController],
  providers: [WebhookConfigService, WebhookEndpointsService, DeliveryTargetReader, PreviousSecretCleanup],
  exports: [WebhookConfigService, WebhookEndpointsService, DeliveryTargetReader],
})
export class WebhookConfigModule {}
