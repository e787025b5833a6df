import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { MediaModule } from '../media/media.module';
import { SpamInboxModule } from '../spam/spam-inbox.module';
import { Token } from './token.entity';
import { TokenMetadataRefreshController } from './token-metadata-refresh.controller';
import { TokenMetadataSyncService } from './token-metadata-sync.service';
import { TokensController } from './tokens.controller';
import { TokensService } from './tokens.service';

@Module({
  imports: [MikroOrmModule.forFeature([Token]), DomainEventsModule, MediaModule, SpamInboxModule],
  controllers: [TokensController, TokenMetadataRefreshController],
  providers: [TokensService, TokenMetadataSyncService],
  exports: [TokensService, TokenMetadataSyncService],
})
export class TokensModule {}
