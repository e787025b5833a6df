import { Module } from '@nestjs/common';
import { ExtensionModule } from '../../../src/extensions/extension.module';
import { DomainEventsModule } from '../../../src/modules/domain-events/domain-events.module';
import { WalletsModule } from '../../../src/modules/wallets/wallets.module';
import { PaymentsController } from './payments.controller';
import { PaymentsService } from './payments.service';
import { PAYMENTS_EXTENSION } from './payments.extension';

@Module({
  imports: [ExtensionModule.forFeature(PAYMENTS_EXTENSION), DomainEventsModule, WalletsModule],
  controllers: [PaymentsController],
  providers: [PaymentsService],
})
export class PaymentsModule {}
