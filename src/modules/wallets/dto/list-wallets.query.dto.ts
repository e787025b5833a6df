import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';

export class ListWalletsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    type: String,
    description: 'Only the wallets at this EVM address (any case; a mixed-case address must be valid EIP-55).',
    example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  address?: string;
}
