import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { SPAM_FILTERS, type SpamFilter } from '../../spam/spam-filter';
import { IsOptional } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';

export const MAX_CONTRACT_FILTERS = 100;

export class NftBalancesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    type: [String],
    description: `Only tokens of these contracts; repeat the parameter for several (at most ${MAX_CONTRACT_FILTERS}).`,
    example: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value))
  @IsArray()
  @ArrayMaxSize(MAX_CONTRACT_FILTERS)
  @IsString({ each: true })
  @Matches(/^0x[0-9a-fA-F]{40}$/, { each: true, message: 'each value must be a 0x-prefixed 20-byte hex address' })
  contractAddress?: string[];

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Holdings at this instant instead of now: ISO 8601 with seconds and an offset (encode `+` as `%2B`). Read from the ' +
      'movement ledger: API movements count from their createdAtUtc, chain movements from their block time, reverted ' +
      'ones never; a movement at exactly asOf counts. Same shape, paging and whitelist as without it.',
    example: '2026-11-25T10:00:00+00:00',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  asOf?: string;

  @ApiPropertyOptional({
    enum: SPAM_FILTERS,
    default: 'include',
    description:
      '`exclude` leaves out tokens whose `spam.isSpam` is true, `only` keeps only those (a token with `spam: null` is not ' +
      'spam); `include` (the default) filters nothing.',
  })
  @IsOptional()
  @IsIn(SPAM_FILTERS)
  spam?: SpamFilter;
}
