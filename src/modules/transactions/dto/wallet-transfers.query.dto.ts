import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { TRANSACTION_TYPES } from '../transaction.rules';
import { type SpamFilter } from '../../spam/spam-filter';
import { ContractAddressQuery, MAX_CONTRACT_FILTERS, SpamFilterQuery } from './holding-query-params';

export const MAX_TRANSFERS_PAGE = 100;

export class WalletTransfersQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TRANSFERS_PAGE,
    default: MAX_TRANSFERS_PAGE,
    description: 'Items per page, 1 to 100.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_TRANSFERS_PAGE)
  pageSize: number = MAX_TRANSFERS_PAGE;

  @ApiPropertyOptional({ type: String, maxLength: 1024, description: "Opaque key from the previous page's `nextPageKey`." })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  pageKey?: string;

  @ApiPropertyOptional({
    type: String,
    description: `Only movements of these types: a comma-separated list of ${TRANSACTION_TYPES.join(', ')} (at least one).`,
    example: 'nftMint,nftDeposit',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  types?: string;

  @ContractAddressQuery(`Only movements of tokens of these contracts; repeat the parameter for several (at most ${MAX_CONTRACT_FILTERS}).`)
  contractAddress?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Only chain movements of this chain.' })
  @IsOptional()
  @IsString()
  @MaxLength(20)
  chainId?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Only movements at or after this instant (createdAtUtc; block time for chain movements). ISO 8601 with an offset; encode `+` as `%2B`.',
    example: '2026-11-25T10:00:00+00:00',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  since?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Only movements before this instant (exclusive). ISO 8601 with an offset; encode `+` as `%2B`.',
    example: '2026-11-26T10:00:00+00:00',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  until?: string;

  @ApiPropertyOptional({ enum: ['confirmed', 'reverted'], description: 'Only movements with this status (default both).' })
  @IsOptional()
  @IsString()
  @MaxLength(20)
  status?: string;

  @SpamFilterQuery(
    '`exclude` leaves out movements of tokens whose `spam.isSpam` is true, `only` keeps only those (a token with `spam: null` is not spam).',
  )
  spam?: SpamFilter;
}
