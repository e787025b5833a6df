import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { badRequest } from '../../common/errors/domain-error';
import { ApiRefusals } from '../../common/http/api-refusals';
import { UuidParam } from '../../common/http/uuid-param';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { isUint256, UINT256_DECIMAL_PATTERN } from '../tokens/uint256';
import { ContractReadsService } from './contract-reads.service';
import { ContractsService } from './contracts.service';
import { HoldersQueryDto, PointInTimeQueryDto, RegisterContractDto, TransfersQueryDto } from './dto/contract.request.dto';
import {
  ContractDto,
  ContractListDto,
  ContractTransferDto,
  ContractTransfersDto,
  HolderDto,
  HoldersDto,
  OwnerDto,
  OwnersDto,
} from './dto/contract.response.dto';
import { spamKey, SpamService } from '../spam/spam.service';
import type { IndexedContract } from './indexed-contract.repository';

const NOT_FOUND = 'CONTRACT_NOT_FOUND: unknown, or another organization’s.';
const POINT_REFUSALS =
  'NOT_YET_INDEXED: `atBlock` is past the contract’s `indexedBlock` (or nothing is indexed yet for `asOf`); ' +
  'BEFORE_INDEXED_RANGE: `atBlock` is before its `fromBlock`, or `asOf` before that block’s time.';

@ApiTags('Contracts')
@Controller('v1/contracts')
export class ContractsController {
  constructor(
    private readonly contracts: ContractsService,
    private readonly reads: ContractReadsService,
    private readonly spam: SpamService,
  ) {}

  /** Contracts as answered: each with its spam classification as the organization sees it. */
  private async answer(organizationId: string, contracts: IndexedContract[]): Promise<ContractDto[]> {
    const views = await this.spam.viewsOf(
      organizationId,
      contracts.map((c) => ({ chainId: c.chainId, contractAddress: c.address })),
    );
    return contracts.map((c) => ContractDto.from(c, views.get(spamKey({ chainId: c.chainId, contractAddress: c.address }))!));
  }

  @Post()
  @Auth('write')
  @ApiOperation({
    operationId: 'registerContract',
    summary: 'Index every holder and transfer of a contract from a block on',
    description:
      'Every ERC-721 and ERC-1155 transfer of the contract from `fromBlock` is indexed in the background (backfilling), then ' +
      'the index follows the chain up to head − CHAIN_CONFIRMATIONS (live). At most 20 contracts per organization.',
  })
  @ApiCreatedResponse({ type: ContractDto })
  @ApiRefusals({
    409: 'CONTRACT_ALREADY_INDEXED: this organization already indexes the contract on this chain.',
    422: 'UNKNOWN_CHAIN: not a followed chain; CONTRACT_LIMIT_REACHED: the organization indexes 20 contracts already.',
  })
  async register(@CurrentKey() key: ApiKeyPrincipal, @Body() body: RegisterContractDto): Promise<ContractDto> {
    const [answer] = await this.answer(key.organizationId, [await this.contracts.register(key.organizationId, body)]);
    return answer;
  }

  @Get()
  @Auth('read')
  @ApiOperation({ operationId: 'listContracts', summary: 'The indexed contracts, oldest first' })
  @ApiOkResponse({ type: ContractListDto })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<ContractListDto> {
    const page = await this.contracts.list(key.organizationId, query.pageSize, query.pageKey);
    return { contracts: await this.answer(key.organizationId, page.items), nextPageKey: page.nextPageKey };
  }

  @Get(':contractId')
  @Auth('read')
  @ApiOperation({ operationId: 'getContract', summary: 'One indexed contract and how far its index has come' })
  @ApiOkResponse({ type: ContractDto })
  @ApiRefusals({ 404: NOT_FOUND })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('contractId') contractId: string): Promise<ContractDto> {
    const [answer] = await this.answer(key.organizationId, [await this.contracts.get(key.organizationId, contractId)]);
    return answer;
  }

  @Delete(':contractId')
  @Auth('write')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteContract', summary: 'Stop indexing a contract and delete its index' })
  @ApiRefusals({ 404: NOT_FOUND })
  async delete(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('contractId') contractId: string): Promise<void> {
    await this.contracts.delete(key.organizationId, contractId);
  }

  @Get(':contractId/holders')
  @Auth('read')
  @ApiOperation({
    operationId: 'listContractHolders',
    summary: 'Every holder of the contract at a block: token ids held and total amount',
    description:
      'Holdings at block N are the sum of the contract’s transfers in blocks `fromBlock`..N. `atBlock` answers that block, ' +
      '`asOf` the last indexed block whose time is at or before it, neither the `indexedBlock`. The zero address is never a holder.',
  })
  @ApiOkResponse({ type: HoldersDto })
  @ApiRefusals({ 404: NOT_FOUND, 422: POINT_REFUSALS })
  async holders(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('contractId') contractId: string,
    @Query() query: HoldersQueryDto,
  ): Promise<HoldersDto> {
    const page = await this.reads.holders(key.organizationId, contractId, query);
    return { blockNumber: page.blockNumber, holders: page.items.map((h) => HolderDto.from(h)), nextPageKey: page.nextPageKey };
  }

  @Get(':contractId/tokens/:blockchainTokenId/owners')
  @Auth('read')
  @ApiOperation({ operationId: 'listContractTokenOwners', summary: 'The owners of one token id of the contract at a block' })
  @ApiParam({ name: 'blockchainTokenId', schema: { type: 'string', pattern: UINT256_DECIMAL_PATTERN }, example: '42' })
  @ApiOkResponse({ type: OwnersDto })
  @ApiRefusals({ 404: NOT_FOUND, 422: POINT_REFUSALS })
  async owners(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('contractId') contractId: string,
    @Param('blockchainTokenId') tokenId: string,
    @Query() query: PointInTimeQueryDto,
  ): Promise<OwnersDto> {
    if (!isUint256(tokenId)) {
      throw badRequest('VALIDATION_FAILED', 'blockchainTokenId: must be a uint256 decimal string', [
        { field: 'blockchainTokenId', message: 'must be a decimal string of an integer from 0 to 2^256-1, without leading zeros' },
      ]);
    }
    const answer = await this.reads.owners(key.organizationId, contractId, tokenId, query);
    return { blockNumber: answer.blockNumber, owners: answer.owners.map((o) => OwnerDto.from(o)) };
  }

  @Get(':contractId/transfers')
  @Auth('read')
  @ApiOperation({
    operationId: 'listContractTransfers',
    summary: 'The contract’s transfers in chain order, between two blocks (both inclusive)',
    description: 'A TransferBatch gives one transfer per id/value pair. Blocks past `indexedBlock` have no transfers yet.',
  })
  @ApiOkResponse({ type: ContractTransfersDto })
  @ApiRefusals({ 404: NOT_FOUND })
  async transfers(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('contractId') contractId: string,
    @Query() query: TransfersQueryDto,
  ): Promise<ContractTransfersDto> {
    const page = await this.reads.transfers(key.organizationId, contractId, query);
    return { transfers: page.items.map((t) => ContractTransferDto.from(t)), nextPageKey: page.nextPageKey };
  }
}
