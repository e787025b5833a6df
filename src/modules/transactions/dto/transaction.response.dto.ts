import { ApiProperty } from '@nestjs/swagger';
import { formatUtc } from '../../../common/time';
import type { NftTransaction } from '../nft-transaction.entity';
import { TRANSACTION_TYPES, TransactionType } from '../transaction.rules';

export class TransactionDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  organizationId: string;
  @ApiProperty({ enum: TRANSACTION_TYPES })
  type: TransactionType;
  @ApiProperty({ format: 'uuid' })
  tokenId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for a mint.' })
  fromWalletId: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for a burn.' })
  toWalletId: string | null;
  @ApiProperty({ description: 'Decimal string of a uint256.', example: '1' })
  amount: string;
  @ApiProperty({ example: '2026-11-22T01:25:42.123000+00:00' })
  createdAtUtc: string;

  static from(transaction: NftTransaction): TransactionDto {
    return {
      id: transaction.id,
      organizationId: transaction.organizationId,
      type: transaction.type,
      tokenId: transaction.tokenId,
      fromWalletId: transaction.fromWalletId,
      toWalletId: transaction.toWalletId,
      amount: transaction.amount,
      createdAtUtc: formatUtc(transaction.createdAt),
    };
  }
}
