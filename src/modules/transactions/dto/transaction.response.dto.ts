import { ApiProperty } from '@nestjs/swagger';
import { toChecksumAddress } from '../../../common/evm-address';
import { formatUtc } from '../../../common/time';
import {
  TRANSACTION_SOURCES,
  TRANSACTION_STATUSES,
  type NftTransaction,
  type TransactionSource,
  type TransactionStatus,
} from '../nft-transaction.entity';
import { TRANSACTION_TYPES, TransactionType } from '../transaction.rules';
import { pick } from '../../../common/pick';

/** What an answer shows of a transaction, however it was read. */
export type TransactionFields = Pick<
  NftTransaction,
  | 'id'
  | 'organizationId'
  | 'type'
  | 'tokenId'
  | 'fromWalletId'
  | 'toWalletId'
  | 'amount'
  | 'source'
  | 'status'
  | 'chainId'
  | 'blockNumber'
  | 'blockHash'
  | 'transactionHash'
  | 'logIndex'
  | 'batchIndex'
  | 'chainFrom'
  | 'chainTo'
> & { createdAtUtc: string };

/** Where on chain a movement happened. */
export class TransactionChainDto {
  @ApiProperty({ type: 'integer', example: 1 })
  chainId: number;
  @ApiProperty({ type: 'integer', example: 21000000 })
  blockNumber: number;
  @ApiProperty({ example: '0x8f5bab218b6bb34476f51ca588e9f4553a3a7ce5e13a66c660a5283e97e9a85a' })
  blockHash: string;
  @ApiProperty({ description: 'The block time (also the transaction’s createdAtUtc).', example: '2026-11-22T01:25:47.000000+00:00' })
  blockTimestampUtc: string;
  @ApiProperty({ example: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060' })
  transactionHash: string;
  @ApiProperty({ type: 'integer', example: 3 })
  logIndex: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: '0-based position of the id/value pair in an ERC-1155 TransferBatch; null for Transfer and TransferSingle.',
  })
  batchIndex: number | null;
  @ApiProperty({
    description: 'On-chain sender, EIP-55 (the zero address for a mint).',
    example: '0x0000000000000000000000000000000000000000',
  })
  from: string;
  @ApiProperty({
    description: 'On-chain receiver, EIP-55 (the zero address for a burn).',
    example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  })
  to: string;
}

export class TransactionDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  organizationId: string;
  @ApiProperty({
    enum: TRANSACTION_TYPES,
    description: 'nftDeposit (from an address outside the organization) and nftWithdrawal (to one) are recorded only from a chain.',
  })
  type: TransactionType;
  @ApiProperty({ format: 'uuid' })
  tokenId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for a mint or a deposit.' })
  fromWalletId: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for a burn or a withdrawal.' })
  toWalletId: string | null;
  @ApiProperty({ description: 'Decimal string of a uint256.', example: '1' })
  amount: string;
  @ApiProperty({ enum: TRANSACTION_SOURCES, description: '`api`: recorded through this API; `chain`: read from a followed chain.' })
  source: TransactionSource;
  @ApiProperty({
    enum: TRANSACTION_STATUSES,
    description: '`reverted`: a chain reorg removed the block; its balance change was undone (never for API transactions).',
  })
  status: TransactionStatus;
  @ApiProperty({ type: TransactionChainDto, nullable: true, description: 'Where on chain; null for API transactions.' })
  chain: TransactionChainDto | null;
  @ApiProperty({
    description: 'When it was recorded; for a chain transaction, its block time.',
    example: '2026-11-22T01:25:42.123000+00:00',
  })
  createdAtUtc: string;

  static from(transaction: NftTransaction): TransactionDto {
    return TransactionDto.fromRow({ ...transaction, createdAtUtc: formatUtc(transaction.createdAt) });
  }

  /** A transaction read as columns (the activity feed), its createdAtUtc already formatted. */
  static fromRow(transaction: TransactionFields): TransactionDto {
    return {
      ...pick(transaction, 'id', 'organizationId', 'type', 'tokenId', 'fromWalletId', 'toWalletId', 'amount', 'source', 'status'),
      chain:
        transaction.chainId === null
          ? null
          : {
              chainId: transaction.chainId,
              blockNumber: transaction.blockNumber!,
              blockHash: transaction.blockHash!,
              blockTimestampUtc: transaction.createdAtUtc,
              transactionHash: transaction.transactionHash!,
              logIndex: transaction.logIndex!,
              batchIndex: transaction.batchIndex,
              from: toChecksumAddress(transaction.chainFrom!),
              to: toChecksumAddress(transaction.chainTo!),
            },
      createdAtUtc: transaction.createdAtUtc,
    };
  }
}
