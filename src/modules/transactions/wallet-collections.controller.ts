import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { WalletCollectionsQueryDto } from './dto/wallet-collections.query.dto';
import { CollectionDto, WalletCollectionsPageDto } from './dto/wallet-collections.response.dto';
import { WalletCollectionsService } from './wallet-collections.service';

@ApiTags('Wallets')
@Controller('v1/wallets')
export class WalletCollectionsController {
  constructor(private readonly collections: WalletCollectionsService) {}

  @Get(':walletId/collections')
  @Auth('read')
  @ApiOperation({
    operationId: 'getWalletCollections',
    summary: "A wallet's holdings grouped by collection (chain and contract)",
    description:
      'One item per (chainId, contractAddress) of the holdings exactly as nft-balances (with the same asOf) lists them: ' +
      'tokenCount tokens held, totalAmount their sum, the contract’s name() and symbol() read once from the chain, its ' +
      'standard and spam classification. Ordered by lowercase contractAddress, then chainId (null first). With the ' +
      'whitelist on, contracts not on it are absent.',
  })
  @ApiOkResponse({ type: WalletCollectionsPageDto })
  @ApiBadRequestResponse({ description: 'VALIDATION_FAILED: a bad query parameter (e.g. asOf without an offset).' })
  @ApiNotFoundResponse({ description: 'WALLET_NOT_FOUND: unknown, or another organization’s.' })
  async list(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('walletId') walletId: string,
    @Query() query: WalletCollectionsQueryDto,
  ): Promise<WalletCollectionsPageDto> {
    const page = await this.collections.walletCollections(key.organizationId, walletId, query);
    return { collections: page.items.map((row) => CollectionDto.from(row)), nextPageKey: page.nextPageKey };
  }
}
