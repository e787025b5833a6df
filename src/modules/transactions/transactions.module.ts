import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
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
export class TransactionsModule {}
