import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { ListWalletsQueryDto } from './dto/list-wallets.query.dto';
import { CreateWalletRequestDto } from './dto/create-wallet.request.dto';
import { WalletDto, WalletPageDto } from './dto/wallet.response.dto';
import { WalletsService } from './wallets.service';

@ApiTags('Wallets')
@Controller('v1/wallets')
export class WalletsController {
  constructor(private readonly wallets: WalletsService) {}

  @Post()
  @Auth('write')
  @ApiOperation({ operationId: 'createWallet', summary: 'Create a wallet (emits custodialAccount / Wallet / create)' })
  @ApiCreatedResponse({ type: WalletDto })
  async create(@CurrentKey() key: ApiKeyPrincipal, @Body() body: CreateWalletRequestDto): Promise<WalletDto> {
    return WalletDto.from(await this.wallets.create(key.organizationId, body));
  }

  @Get()
  @Auth('read')
  @ApiOperation({
    operationId: 'listWallets',
    summary: "List the organization's wallets, oldest first; with `address`, the wallets at that address",
  })
  @ApiOkResponse({ type: WalletPageDto })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: ListWalletsQueryDto): Promise<WalletPageDto> {
    const page = await this.wallets.list(key.organizationId, query.pageSize, query.pageKey, query.address);
    return { wallets: page.items.map((wallet) => WalletDto.from(wallet)), nextPageKey: page.nextPageKey };
  }

  @Get(':walletId')
  @Auth('read')
  @ApiOperation({ operationId: 'getWallet', summary: 'Get one wallet' })
  @ApiOkResponse({ type: WalletDto })
  @ApiNotFoundResponse({ description: 'WALLET_NOT_FOUND: unknown, or another organization’s.' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('walletId') walletId: string): Promise<WalletDto> {
    return WalletDto.from(await this.wallets.get(key.organizationId, walletId));
  }
}
