import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

export class CreateWalletRequestDto {
  /** A label for the wallet, e.g. the end user's name in the integrator's system. */
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  /**
   * The wallet's EVM address: all-lowercase, all-uppercase hex, or valid EIP-55 mixed case; not
   * the zero address (400 INVALID_ADDRESS).
   * @example 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed
   */
  @ApiPropertyOptional({ type: String, nullable: true, example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  @IsOptional()
  @IsString()
  @Matches(/^0x[0-9a-fA-F]{40}$/, { message: 'must be a 0x-prefixed 20-byte hex address' })
  address?: string | null;
}
