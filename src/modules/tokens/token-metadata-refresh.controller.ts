import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNotFoundResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { TokenMetadataSyncService } from './token-metadata-sync.service';

export class MetadataRefreshAcceptedDto {
  @ApiProperty({ format: 'uuid' })
  tokenId: string;
  @ApiProperty({
    enum: ['pending', 'ok'],
    description:
      'A chain token is `pending` until the fetch ends: `ok`, or `failed` with `metadataError` on the token. A token recorded ' +
      'through the API has no token URI: its metadata stays as written (`ok`).',
  })
  metadataStatus: 'pending' | 'ok';
  @ApiProperty({
    enum: ['pending', 'none'],
    description: 'The token’s image is fetched again (`pending`, see `media` on the token); `none` when it has no image.',
  })
  mediaStatus: 'pending' | 'none';
}

@ApiTags('Tokens')
@Controller('v1/tokens')
export class TokenMetadataRefreshController {
  constructor(private readonly metadata: TokenMetadataSyncService) {}

  @Post(':tokenId/metadata/refresh')
  @Auth('write')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'refreshTokenMetadata',
    summary:
      'Fetch a token again in the background: a chain token’s metadata from its token URI (emits nft / Token / update when a field ' +
      'changes), and any token’s image, even from a URL fetched before (emits nft / Token / update with `media` when it ends)',
  })
  @ApiAcceptedResponse({ type: MetadataRefreshAcceptedDto })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND: unknown, another organization’s, or hidden by the whitelist.' })
  async refresh(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('tokenId') tokenId: string): Promise<MetadataRefreshAcceptedDto> {
    const { metadataStatus, mediaStatus } = await this.metadata.requestMetadataRefresh(key.organizationId, tokenId);
    return { tokenId, metadataStatus, mediaStatus: mediaStatus === 'none' ? 'none' : 'pending' };
  }
}
