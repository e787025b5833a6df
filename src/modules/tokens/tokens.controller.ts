import { Body, Controller, Get, Patch, Post, Req } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import type { Request } from 'express';
import { UuidParam } from '../../common/http/uuid-param';
import { MediaLinkSigner } from '../media/media-links';
import { CreateTokenRequestDto } from './dto/create-token.request.dto';
import { TokenDto } from './dto/token.response.dto';
import { UpdateTokenRequestDto } from './dto/update-token.request.dto';
import { TokensService } from './tokens.service';

@ApiTags('Tokens')
@Controller('v1/tokens')
export class TokensController {
  constructor(
    private readonly tokens: TokensService,
    private readonly mediaLinks: MediaLinkSigner,
  ) {}

  @Post()
  @Auth('write')
  @ApiOperation({ operationId: 'createToken', summary: 'Record a token with its metadata (emits nft / Token / create)' })
  @ApiCreatedResponse({ type: TokenDto })
  @ApiConflictResponse({ description: 'TOKEN_ALREADY_EXISTS: same contract and blockchainTokenId in this organization.' })
  async create(@CurrentKey() key: ApiKeyPrincipal, @Body() body: CreateTokenRequestDto, @Req() req: Request): Promise<TokenDto> {
    return TokenDto.from(await this.tokens.create(key.organizationId, body), this.mediaLinks.forRequest(req));
  }

  @Get(':tokenId')
  @Auth('read')
  @ApiOperation({ operationId: 'getToken', summary: 'Get one token with its metadata' })
  @ApiOkResponse({ type: TokenDto })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND: unknown, another organization’s, or hidden by the whitelist.' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('tokenId') tokenId: string, @Req() req: Request): Promise<TokenDto> {
    return TokenDto.from(await this.tokens.getVisible(key.organizationId, tokenId), this.mediaLinks.forRequest(req));
  }

  @Patch(':tokenId')
  @Auth('write')
  @ApiOperation({
    operationId: 'updateToken',
    summary: 'Change token metadata (emits nft / Token / update with the changed fields; nothing when nothing changed)',
  })
  @ApiOkResponse({ type: TokenDto })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND: unknown, or another organization’s.' })
  async update(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('tokenId') tokenId: string,
    @Body() body: UpdateTokenRequestDto,
    @Req() req: Request,
  ): Promise<TokenDto> {
    return TokenDto.from(await this.tokens.updateMetadata(key.organizationId, tokenId, body.metadata), this.mediaLinks.forRequest(req));
  }
}
