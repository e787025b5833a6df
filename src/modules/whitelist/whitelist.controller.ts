import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { EVM_ADDRESS_PATTERN } from '../../common/evm-address';
import { CurrentKey, ReqMeta, RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { AddWhitelistContractsDto, UpdateNftWhitelistDto } from './dto/whitelist.request.dto';
import { AddedWhitelistContractsDto, NftWhitelistDto, NftWhitelistSettingsDto } from './dto/whitelist.response.dto';
import { WhitelistService } from './whitelist.service';

@ApiTags('NFT whitelist')
@Auth('admin')
@Controller('api/organization/v1/current-organization/nft-whitelist')
export class WhitelistController {
  constructor(private readonly whitelist: WhitelistService) {}

  @Get()
  @ApiOperation({ operationId: 'getNftWhitelist', summary: 'The NFT contract whitelist: whether it is on, and one page of its contracts' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<NftWhitelistDto> {
    const page = await this.whitelist.get(key.organizationId, query.pageSize, query.pageKey);
    return { enabled: page.enabled, contractAddresses: page.items, nextPageKey: page.nextPageKey };
  }

  @Patch()
  @ApiOperation({
    operationId: 'updateNftWhitelist',
    summary: 'Switch the whitelist on or off; takes effect on the next request everywhere',
  })
  async update(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: UpdateNftWhitelistDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<NftWhitelistSettingsDto> {
    return this.whitelist.setEnabled(key, body.enabled, meta);
  }

  @Post('contracts')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'addNftWhitelistContracts',
    summary: 'Add contracts to the whitelist (1 to 1,000; those already present are not errors)',
  })
  @ApiBadRequestResponse({ description: 'INVALID_ADDRESS naming each bad entry (`contractAddresses[3]`); nothing is added.' })
  @ApiUnprocessableEntityResponse({ description: 'WHITELIST_FULL: the request would exceed the limit; nothing is added.' })
  async add(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: AddWhitelistContractsDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AddedWhitelistContractsDto> {
    return this.whitelist.addContracts(key, body.contractAddresses, meta);
  }

  @Delete('contracts/:contractAddress')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteNftWhitelistContract', summary: 'Delete a contract from the whitelist' })
  @ApiParam({
    name: 'contractAddress',
    schema: { type: 'string', pattern: EVM_ADDRESS_PATTERN },
    description: 'Lowercase, uppercase hex or EIP-55.',
    example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  })
  @ApiBadRequestResponse({ description: 'INVALID_ADDRESS: not an address, or a wrong EIP-55 checksum.' })
  @ApiNotFoundResponse({ description: 'CONTRACT_NOT_WHITELISTED' })
  async delete(
    @CurrentKey() key: ApiKeyPrincipal,
    @Param('contractAddress') contractAddress: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.whitelist.deleteContract(key, contractAddress, meta);
  }
}
