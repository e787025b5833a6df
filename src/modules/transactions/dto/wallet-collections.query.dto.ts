import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { SPAM_FILTERS, type SpamFilter } from '../../spam/spam-filter';

export class WalletCollectionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Holdings at this instant, exactly as nft-balances with the same asOf lists them. ISO 8601 with an offset; encode `+` as `%2B`.',
    example: '2026-11-25T10:00:00+00:00',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  asOf?: string;

  @ApiPropertyOptional({
    enum: SPAM_FILTERS,
    default: 'include',
    description: '`exclude` leaves out spam collections, `only` keeps only them (API-recorded tokens are not spam).',
  })
  @IsOptional()
  @IsIn(SPAM_FILTERS)
  spam?: SpamFilter;
}
