import { Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { TokenMetadataSyncService } from './token-metadata-sync.service';

export class MetadataRefreshAcceptedDto {
  @ApiProperty({ format: 'uuid' })
  tokenId: string;
  @ApiProperty({
    enum: ['pending'],
    description: 'The token is `pending` until the fetch ends: `ok`, or `failed` with `metadataError` on the token.',
  })
  metadataStatus: 'pending';
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
      'Fetch the metadata of a chain token again from its token URI, in the background (emits nft / Token / update when a field changes)',
  })
  @ApiAcceptedResponse({ type: MetadataRefreshAcceptedDto })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND: unknown, another organization’s, or hidden by the whitelist.' })
  @ApiUnprocessableEntityResponse({ description: 'TOKEN_NOT_ON_CHAIN: the token was recorded through the API (no chainId).' })
  async refresh(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('tokenId') tokenId: string): Promise<MetadataRefreshAcceptedDto> {
    await this.metadata.requestMetadataRefresh(key.organizationId, tokenId);
    return { tokenId, metadataStatus: 'pending' };
  }
}
