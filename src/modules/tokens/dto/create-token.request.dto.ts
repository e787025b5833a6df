import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { IsUint256String, UINT256_DECIMAL_PATTERN } from '../uint256';
import { TokenMetadataRequestDto } from './token-metadata.request.dto';

export class CreateTokenRequestDto {
  /**
   * Address of the contract that created the NFT: all-lowercase, all-uppercase hex, or valid EIP-55.
   * @example 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed
   */
  @ApiProperty({ example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  @IsString()
  @Matches(/^0x[0-9a-fA-F]{40}$/, { message: 'must be a 0x-prefixed 20-byte hex address' })
  contractAddress: string;

  /**
   * Token id on the blockchain: a uint256 as a decimal string.
   * @example "42"
   */
  @ApiProperty({ example: '42', description: 'uint256 as a decimal string.', pattern: UINT256_DECIMAL_PATTERN })
  @IsUint256String()
  blockchainTokenId: string;

  @ApiPropertyOptional({ type: TokenMetadataRequestDto, nullable: true })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => TokenMetadataRequestDto)
  metadata?: TokenMetadataRequestDto | null;
}
