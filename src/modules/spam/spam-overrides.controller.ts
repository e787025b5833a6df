import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey, ReqMeta, RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { badRequest } from '../../common/errors/domain-error';
import { EVM_ADDRESS_PATTERN, parseAddress } from '../../common/evm-address';
import { ApiRefusals } from '../../common/http/api-refusals';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { PutSpamOverrideRequestDto, SpamOverrideDto, SpamOverridesPageDto } from './dto/spam-override.dto';
import { SpamService } from './spam.service';

const CHAIN_ID = /^(0|[1-9]\d{0,15})$/;

function chainIdOf(value: string): number {
  if (!CHAIN_ID.test(value) || !Number.isSafeInteger(Number(value))) {
    throw badRequest('VALIDATION_FAILED', 'chainId: must be a non-negative integer', [
      { field: 'chainId', message: 'must be a non-negative integer' },
    ]);
  }
  return Number(value);
}

/** An override's path, `:chainId/:contractAddress`, as PUT and DELETE document it. */
const OverridePathParams = () =>
  applyDecorators(
    ApiParam({ name: 'chainId', schema: { type: 'integer', minimum: 0 }, description: 'A chain the service follows.' }),
    ApiParam({
      name: 'contractAddress',
      schema: { type: 'string', pattern: EVM_ADDRESS_PATTERN },
      description: 'Lowercase, uppercase hex or EIP-55.',
      example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    }),
  );

/** The contract an override's path names; a malformed chain id or address is a 400. */
function overrideTarget(chainId: string, contractAddress: string): { chainId: number; contractAddress: string } {
  return { chainId: chainIdOf(chainId), contractAddress: parseAddress(contractAddress, 'contractAddress') };
}

@ApiTags('Spam')
@Auth('admin')
@Controller('api/organization/v1/current-organization/spam-overrides')
export class SpamOverridesController {
  constructor(private readonly spam: SpamService) {}

  @Get()
  @ApiOperation({ operationId: 'listSpamOverrides', summary: "The organization's spam overrides, one page" })
  @ApiOkResponse({ type: SpamOverridesPageDto })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<SpamOverridesPageDto> {
    const page = await this.spam.overrides(key.organizationId, query.pageSize, query.pageKey);
    return { spamOverrides: page.items.map((row) => SpamOverrideDto.from(row)), nextPageKey: page.nextPageKey };
  }

  @Put(':chainId/:contractAddress')
  @ApiOperation({
    operationId: 'putSpamOverride',
    summary: "Decide whether a contract is spam for this organization (its tokens' spam.source becomes organization)",
    description:
      'Any contract of a followed chain, seen or not. Holders of its tokens in this organization get the `nft` `update` ' +
      'webhook with `changes: {spam}` per token whose spam changed. `reasons` still lists the rules that fired.',
  })
  @OverridePathParams()
  @ApiOkResponse({ type: SpamOverrideDto })
  @ApiRefusals({
    400: 'VALIDATION_FAILED (a non-integer chainId, a non-boolean isSpam) or INVALID_ADDRESS.',
    422: 'UNKNOWN_CHAIN: not a chain the service follows.',
  })
  async put(
    @CurrentKey() key: ApiKeyPrincipal,
    @Param('chainId') chainId: string,
    @Param('contractAddress') contractAddress: string,
    @Body() body: PutSpamOverrideRequestDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SpamOverrideDto> {
    const row = { ...overrideTarget(chainId, contractAddress), isSpam: body.isSpam };
    return SpamOverrideDto.from(await this.spam.putOverride(key, row, meta));
  }

  @Delete(':chainId/:contractAddress')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteSpamOverride', summary: "Remove the organization's override: the rules decide again" })
  @OverridePathParams()
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiRefusals({
    400: 'VALIDATION_FAILED (a non-integer chainId) or INVALID_ADDRESS.',
    404: 'SPAM_OVERRIDE_NOT_FOUND: the organization has no override for it.',
  })
  async delete(
    @CurrentKey() key: ApiKeyPrincipal,
    @Param('chainId') chainId: string,
    @Param('contractAddress') contractAddress: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    const target = overrideTarget(chainId, contractAddress);
    await this.spam.deleteOverride(key, target.chainId, target.contractAddress, meta);
  }
}
