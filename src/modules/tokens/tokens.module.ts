import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module, OnModuleInit } from '@nestjs/common';
import { EventResources } from '../domain-events/event-resources';
import { MediaLinkSigner } from '../media/media-links';
import { TokenDto } from './dto/token.response.dto';
import { TokenRepository } from './token.repository';
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
export class TokensModule implements OnModuleInit {
  constructor(
    private readonly resources: EventResources,
    private readonly tokens: TokenRepository,
    private readonly links: MediaLinkSigner,
  ) {}

  /** Full webhook bodies and content filters see a token as GET /v1/tokens/{id} answers. */
  onModuleInit(): void {
    this.resources.register('Token', async (organizationId, ids) => {
      const links = this.links.forWebhooks();
      return new Map((await this.tokens.viewsByIds(organizationId, ids)).map((view) => [view.id, TokenDto.from(view, links)]));
    });
  }
}
