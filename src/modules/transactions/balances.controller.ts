import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import type { Request } from 'express';
import { UuidParam } from '../../common/http/uuid-param';
import { MediaLinkSigner } from '../media/media-links';
import { BalancesService } from './balances.service';
import { NftBalancesPageDto, NftTokenBalanceDto } from './dto/nft-balance.response.dto';
import { NftBalancesQueryDto } from './dto/nft-balances.query.dto';

@ApiTags('Wallets')
@Controller('v2/wallets')
export class BalancesController {
  constructor(
    private readonly balances: BalancesService,
    private readonly mediaLinks: MediaLinkSigner,
  ) {}

  @Get(':walletId/nft-balances')
  @Auth('read')
  @ApiOperation({
    operationId: 'getNftBalances',
    summary: 'NFTs held by a wallet, with their tokens and metadata',
    description:
      'Only amounts above zero, ordered by tokenId. With the whitelist on, tokens of contracts not on it are absent. ' +
      'With `asOf`, the holdings at that past instant (reverted chain movements excluded).',
  })
  @ApiOkResponse({ type: NftBalancesPageDto })
  @ApiBadRequestResponse({ description: 'VALIDATION_FAILED: a bad query parameter (e.g. asOf without an offset).' })
  @ApiNotFoundResponse({ description: 'WALLET_NOT_FOUND: unknown, or another organization’s.' })
  async list(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('walletId') walletId: string,
    @Query() query: NftBalancesQueryDto,
    @Req() req: Request,
  ): Promise<NftBalancesPageDto> {
    const page = await this.balances.walletBalances(key.organizationId, walletId, query);
    const links = this.mediaLinks.forRequest(req);
    return { nftTokenBalances: page.items.map((balance) => NftTokenBalanceDto.from(balance, links)), nextPageKey: page.nextPageKey };
  }
}
