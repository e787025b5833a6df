import { ApiProperty } from '@nestjs/swagger';
import { toChecksumAddress } from '../../../common/evm-address';
import { pick } from '../../../common/pick';
import { SpamDto } from '../../spam/dto/spam.response.dto';
import type { CollectionRow } from '../wallet-collections.sql';

export class CollectionDto {
  @ApiProperty({ type: 'integer', nullable: true, description: 'The chain of its tokens; null for tokens recorded through the API.' })
  chainId: number | null;
  @ApiProperty({ description: 'EIP-55 checksum form.', example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  contractAddress: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The contract's name(), read once; null when the call fails or for API tokens.",
  })
  name: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The contract's symbol(), read once; null when the call fails or for API tokens.",
  })
  symbol: string | null;
  @ApiProperty({ enum: ['erc721', 'erc1155'], nullable: true, description: 'null for tokens recorded through the API.' })
  standard: 'erc721' | 'erc1155' | null;
  @ApiProperty({ type: 'integer', description: 'How many of its tokens the wallet holds.' })
  tokenCount: number;
  @ApiProperty({ description: 'Decimal string: the sum of the amounts held.', example: '3' })
  totalAmount: string;
  @ApiProperty({ type: SpamDto, nullable: true, description: 'The contract’s spam classification; null for API tokens.' })
  spam: SpamDto | null;

  static from(row: CollectionRow): CollectionDto {
    return {
      chainId: row.chainId,
      contractAddress: toChecksumAddress(row.contractAddress),
      ...pick(row, 'name', 'symbol', 'standard', 'tokenCount', 'totalAmount'),
      spam: row.spam === null ? null : { isSpam: row.spam.isSpam, reasons: [...row.spam.reasons], source: row.spam.source },
    };
  }
}

export class WalletCollectionsPageDto {
  @ApiProperty({ type: [CollectionDto], description: 'Ordered by lowercase contractAddress, then chainId (null first).' })
  collections: CollectionDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Key of the next page; null on the last page.' })
  nextPageKey: string | null;
}
