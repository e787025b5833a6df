import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { IsUint256String, UINT256_DECIMAL_PATTERN } from '../../tokens/uint256';

/** No fromWalletId mints, no toWalletId burns, both transfer; one of them is required. */
export class CreateTransactionRequestDto {
  /** The token that moves. */
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  tokenId: string;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Sender; absent for a mint.' })
  @IsOptional()
  @IsUUID('all')
  fromWalletId?: string | null;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Receiver; absent for a burn.' })
  @IsOptional()
  @IsUUID('all')
  toWalletId?: string | null;

  @ApiPropertyOptional({
    type: String,
    default: '1',
    example: '1',
    pattern: UINT256_DECIMAL_PATTERN,
    description: 'How many units move: a decimal string from 1 to 2^256-1.',
  })
  @IsOptional()
  @IsUint256String({ positive: true })
  amount?: string;
}
