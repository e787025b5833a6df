import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { TRANSACTION_TYPES } from '../transaction.rules';
import { MAX_CONTRACT_FILTERS } from './nft-balances.query.dto';
import { SPAM_FILTERS, type SpamFilter } from '../../spam/spam-filter';

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

  @ApiPropertyOptional({
    type: [String],
    description: `Only movements of tokens of these contracts; repeat the parameter for several (at most ${MAX_CONTRACT_FILTERS}).`,
    example: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value))
  @IsArray()
  @ArrayMaxSize(MAX_CONTRACT_FILTERS)
  @IsString({ each: true })
  @Matches(/^0x[0-9a-fA-F]{40}$/, { each: true, message: 'each value must be a 0x-prefixed 20-byte hex address' })
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

  @ApiPropertyOptional({
    enum: SPAM_FILTERS,
    default: 'include',
    description:
      '`exclude` leaves out movements of tokens whose `spam.isSpam` is true, `only` keeps only those (a token with `spam: null` is not spam).',
  })
  @IsOptional()
  @IsIn(SPAM_FILTERS)
  spam?: SpamFilter;
}
