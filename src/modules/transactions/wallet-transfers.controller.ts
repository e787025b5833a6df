import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { TransactionDto } from './dto/transaction.response.dto';
import { WalletTransfersQueryDto } from './dto/wallet-transfers.query.dto';
import { WalletTransfersPageDto } from './dto/wallet-transfers.response.dto';
import { WalletTransfersService } from './wallet-transfers.service';

@ApiTags('Wallets')
@Controller('v1/wallets')
export class WalletTransfersController {
  constructor(private readonly transfers: WalletTransfersService) {}

  @Get(':walletId/transfers')
  @Auth('read')
  @ApiOperation({
    operationId: 'getWalletTransfers',
    summary: "A wallet's activity: every movement it sent or received, newest first",
    description:
      'API and chain movements of any status, each exactly as GET /v1/transactions/{id} answers it, newest first by ' +
      '(createdAtUtc, id). A movement of a block a reorg replaced stays with status `reverted`. With the whitelist on, ' +
      'movements of contracts not on it are absent. Pages never skip or repeat a movement while others are recorded.',
  })
  @ApiOkResponse({ type: WalletTransfersPageDto })
  @ApiBadRequestResponse({ description: 'VALIDATION_FAILED: a malformed filter (unknown type, a date without an offset, ...).' })
  @ApiNotFoundResponse({ description: 'WALLET_NOT_FOUND: unknown, or another organization’s.' })
  async list(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('walletId') walletId: string,
    @Query() query: WalletTransfersQueryDto,
  ): Promise<WalletTransfersPageDto> {
    const page = await this.transfers.walletTransfers(key.organizationId, walletId, query);
    return { transfers: page.items.map((row) => TransactionDto.fromRow(row)), nextPageKey: page.nextPageKey };
  }
}
