import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Auth, OperatorAuth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { ChainStatusService } from './chain-status.service';
import { ChainStatusDto, ChainStatusListDto } from './dto/chain-status.response.dto';
import { WalletSyncDto, WalletSyncRequestDto } from './dto/wallet-sync.dto';

@ApiTags('Operator')
@OperatorAuth()
@Controller('admin/v1/chains')
export class ChainsAdminController {
  constructor(private readonly status: ChainStatusService) {}

  @Get()
  @ApiOperation({
    operationId: 'listChains',
    summary: 'Followed chains: head, applied block, lag and last error of each follower',
    description: 'Read from the followers’ cursors in the database: an unreachable node never fails or slows this answer.',
  })
  @ApiOkResponse({ type: ChainStatusListDto })
  async list(): Promise<ChainStatusListDto> {
    return { chains: (await this.status.figures()).map((f) => ChainStatusDto.from(f)) };
  }
}

@ApiTags('Wallets')
@Controller('v1/wallets')
export class WalletSyncController {
  constructor(private readonly status: ChainStatusService) {}

  @Post(':walletId/sync')
  @Auth('write')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'syncWallet',
    summary: "Replay a wallet's history on a chain from a block (in the background)",
    description:
      'Records the movements of the wallet’s address from `fromBlock` up to the block the follower has applied (at most 1,000,000 ' +
      'blocks), exactly once: movements already recorded are not recorded again, and asking again while the replay is open answers it.',
  })
  @ApiAcceptedResponse({ type: WalletSyncDto })
  @ApiNotFoundResponse({ description: 'WALLET_NOT_FOUND: unknown, or another organization’s.' })
  @ApiUnprocessableEntityResponse({
    description: 'UNKNOWN_CHAIN: not a followed chain; WALLET_HAS_NO_ADDRESS; SYNC_RANGE_TOO_LARGE: more than 1,000,000 blocks.',
  })
  async sync(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('walletId') walletId: string,
    @Body() body: WalletSyncRequestDto,
  ): Promise<WalletSyncDto> {
    return WalletSyncDto.from(await this.status.requestSync(key.organizationId, walletId, body.chainId, body.fromBlock));
  }
}
