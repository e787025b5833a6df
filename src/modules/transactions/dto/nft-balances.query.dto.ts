import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, Matches } from 'class-validator';
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
}
