import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, OperatorAuth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import { ApiRefusals } from '../../common/http/api-refusals';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { ChainStatusService } from './chain-status.service';
import { ChainStatusDto, ChainStatusListDto } from './dto/chain-status.response.dto';
import { WalletSyncDto, WalletSyncRequestDto } from './dto/wallet-sync.dto';
import { WalletSyncService } from './wallet-sync.service';

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
  constructor(private readonly syncs: WalletSyncService) {}

  @Post(':walletId/sync')
  @Auth('write')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'syncWallet',
    summary: "Replay a wallet's history on a chain from a block (in the background)",
    description:
      'Records the movements of the wallet’s address from `fromBlock` up to the block the follower has applied (at most 1,000,000 ' +
      'blocks) for this organization only (another organization’s wallet at the same address gains nothing from it), exactly once: ' +
      'movements already recorded are not recorded again, and asking again while the replay is open answers it. A wallet has at ' +
      'most one open sync per chain and an organization at most 5 open syncs; open syncs of all organizations take turns on the ' +
      'chain, one block range each.',
  })
  @ApiAcceptedResponse({ type: WalletSyncDto, description: 'The new replay, or the open one of the same request.' })
  @ApiRefusals({
    404: 'WALLET_NOT_FOUND: unknown, or another organization’s.',
    409: 'SYNC_IN_PROGRESS: the wallet has an open sync on this chain from another block; nothing is created.',
    422:
      'UNKNOWN_CHAIN: not a followed chain; WALLET_HAS_NO_ADDRESS (or the zero address); SYNC_RANGE_TOO_LARGE: more than ' +
      '1,000,000 blocks; SYNC_LIMIT_REACHED: the organization has 5 open (pending or running) syncs; nothing is created.',
  })
  async sync(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('walletId') walletId: string,
    @Body() body: WalletSyncRequestDto,
  ): Promise<WalletSyncDto> {
    return WalletSyncDto.from(await this.syncs.request(key.organizationId, walletId, body.chainId, body.fromBlock));
  }
}
