import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module, OnModuleInit } from '@nestjs/common';
import { EventResources } from '../domain-events/event-resources';
import { WalletDto } from './dto/wallet.response.dto';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { Wallet } from './wallet.entity';
import { WalletsController } from './wallets.controller';
import { WalletsService } from './wallets.service';

@Module({
  imports: [MikroOrmModule.forFeature([Wallet]), DomainEventsModule],
  controllers: [WalletsController],
  providers: [WalletsService],
  exports: [WalletsService],
})
export class WalletsModule implements OnModuleInit {
  constructor(
    private readonly resources: EventResources,
    private readonly wallets: WalletsService,
  ) {}

  /** Full webhook bodies and content filters see a wallet as GET /v1/wallets/{id} answers. */
  onModuleInit(): void {
    this.resources.register(
      'Wallet',
      async (organizationId, ids) => new Map((await this.wallets.findMany(organizationId, ids)).map((w) => [w.id, WalletDto.from(w)])),
    );
  }
}
