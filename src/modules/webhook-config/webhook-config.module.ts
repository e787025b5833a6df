import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { DeliveryTargetReader } from './delivery-target.reader';
import { PreviousSecretCleanup } from './previous-secret-cleanup.service';
import { WebhookConfigController } from './webhook-config.controller';
import { WebhookConfig } from './webhook-config.entity';
import { WebhookConfigService } from './webhook-config.service';

@Module({
  imports: [MikroOrmModule.forFeature([WebhookConfig]), AuditModule],
  controllers: [WebhookConfigController],
  providers: [WebhookConfigService, DeliveryTargetReader, PreviousSecretCleanup],
  exports: [WebhookConfigService, DeliveryTargetReader],
})
export class WebhookConfigModule {}
