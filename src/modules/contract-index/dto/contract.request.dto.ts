import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { EVM_ADDRESS_PATTERN } from '../../../common/evm-address';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';

export class RegisterContractDto {
  /** A chain the service follows (CHAIN_RPC_URLS); another answers 422 UNKNOWN_CHAIN. */
  @ApiProperty({ type: 'integer', minimum: 0, example: 1 })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  chainId: number;

  /** The contract: lowercase, uppercase hex or EIP-55. An address without code is accepted (its standard is null). */
  @ApiProperty({ type: String, pattern: EVM_ADDRESS_PATTERN, example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  @IsString()
  @Matches(new RegExp(EVM_ADDRESS_PATTERN), { message: 'must be a 0x-prefixed 20-byte hex address' })
  address: string;

  /** First block whose transfers count: holdings are the sum of the contract's transfers from this block on. */
  @ApiProperty({ type: 'integer', minimum: 0, example: 19000000 })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  fromBlock: number;
}

const BLOCK_PATTERN = '^(0|[1-9][0-9]{0,15})$';

/** `atBlock` or `asOf`, not both; neither reads at the contract's `indexedBlock`. */
export class PointInTimeQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Holdings after this block: between the contract’s `fromBlock` and `indexedBlock` (422 otherwise).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(20)
  atBlock?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description:
      'Holdings at the last indexed block whose time is at or before this instant: ISO 8601 with seconds and an offset ' +
      '(encode `+` as `%2B`). Not with `atBlock`.',
    example: '2026-11-25T10:00:00+00:00',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  asOf?: string;
}

export class HoldersQueryDto extends IntersectionType(PageQueryDto, PointInTimeQueryDto) {}

export class TransfersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'First block (inclusive); the contract’s `fromBlock` by default.' })
  @IsOptional()
  @IsString()
  @Matches(new RegExp(BLOCK_PATTERN), { message: 'must be an integer ≥ 0' })
  fromBlock?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Last block (inclusive); the contract’s `indexedBlock` by default. Blocks not indexed yet simply have no transfers.',
  })
  @IsOptional()
  @IsString()
  @Matches(new RegExp(BLOCK_PATTERN), { message: 'must be an integer ≥ 0' })
  toBlock?: string;
}
