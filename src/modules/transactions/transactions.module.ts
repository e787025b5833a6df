import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module, OnModuleInit } from '@nestjs/common';
import { EventResources } from '../domain-events/event-resources';
import { TransactionDto } from './dto/transaction.response.dto';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { MediaModule } from '../media/media.module';
import { SpamInboxModule } from '../spam/spam-inbox.module';
import { TokensModule } from '../tokens/tokens.module';
import { WalletsModule } from '../wallets/wallets.module';
import { Balance } from './balance.entity';
import { BalancesController } from './balances.controller';
import { BalancesService } from './balances.service';
import { ChainMovementsService } from './chain-movements.service';
import { IdempotencyKey } from './idempotency-key.entity';
import { IdempotencyKeyPurger } from './idempotency-key.purger';
import { NftTransaction } from './nft-transaction.entity';
import { TransactionsController } from './transactions.controller';
import { TransactionsService } from './transactions.service';
import { WalletCollectionsController } from './wallet-collections.controller';
import { WalletCollectionsService } from './wallet-collections.service';
import { WalletTransfersController } from './wallet-transfers.controller';
import { WalletTransfersService } from './wallet-transfers.service';

@Module({
  imports: [
    MikroOrmModule.forFeature([NftTransaction, Balance, IdempotencyKey]),
    DomainEventsModule,
    TokensModule,
    WalletsModule,
    MediaModule,
    SpamInboxModule,
  ],
  controllers: [TransactionsController, BalancesController, WalletTransfersController, WalletCollectionsController],
  providers: [
    TransactionsService,
    BalancesService,
    IdempotencyKeyPurger,
    ChainMovementsService,
    WalletTransfersService,
    WalletCollectionsService,
  ],
  exports: [ChainMovementsService],
})
export class TransactionsModule implements OnModuleInit {
  constructor(
    private readonly resources: EventResources,
    private readonly transactions: TransactionsService,
  ) {}

  /** Full webhook bodies and content filters see a transaction as GET /v1/transactions/{id} answers. */
  onModuleInit(): void {
    this.resources.register(
      'Transaction',
      async (organizationId, ids) =>
        new Map((await this.transactions.findMany(organizationId, ids)).map((t) => [t.id, TransactionDto.from(t)])),
    );
  }
}
