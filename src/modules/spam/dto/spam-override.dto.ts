import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { toChecksumAddress } from '../../../common/evm-address';
import type { SpamOverrideRow } from '../spam.repository';

export class PutSpamOverrideRequestDto {
  @ApiProperty({ description: "The organization's verdict: its tokens of this contract show this isSpam, with source `organization`." })
  @IsBoolean()
  isSpam: boolean;
}

export class SpamOverrideDto {
  @ApiProperty({ type: 'integer', example: 1 })
  chainId: number;
  @ApiProperty({ description: 'EIP-55 checksum form.', example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  contractAddress: string;
  @ApiProperty()
  isSpam: boolean;

  static from(row: SpamOverrideRow): SpamOverrideDto {
    return { chainId: row.chainId, contractAddress: toChecksumAddress(row.contractAddress), isSpam: row.isSpam };
  }
}

export class SpamOverridesPageDto {
  @ApiProperty({ type: [SpamOverrideDto], description: 'Ordered by chainId, then lowercase contractAddress.' })
  spamOverrides: SpamOverrideDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Key of the next page; null on the last page.' })
  nextPageKey: string | null;
}
