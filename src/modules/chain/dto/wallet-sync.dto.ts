import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { formatUtc } from '../../../common/time';
import type { WalletSync } from '../wallet-sync.repository';
import { pick } from '../../../common/pick';

export class WalletSyncRequestDto {
  /** A chain the service follows (CHAIN_RPC_URLS); another answers 422 UNKNOWN_CHAIN. */
  @ApiProperty({ type: 'integer', minimum: 1, example: 1 })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  chainId: number;

  /** First block of the replay; at most 1,000,000 blocks below the block the follower has applied. */
  @ApiProperty({ type: 'integer', minimum: 0, example: 19000000 })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  fromBlock: number;
}

export class WalletSyncDto {
  @ApiProperty({ format: 'uuid', description: 'The replay; asking again while it is open answers the same one.' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  walletId: string;
  @ApiProperty({ type: 'integer' })
  chainId: number;
  @ApiProperty({ type: 'integer' })
  fromBlock: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      'Last block replayed: the block the follower had applied when the replay started (it records everything after); null until then.',
  })
  toBlock: number | null;
  @ApiProperty({ enum: ['pending', 'running', 'done', 'failed'] })
  status: string;
  @ApiProperty({
    type: 'integer',
    description: 'Transactions the replay recorded so far (movements already recorded are not counted again).',
  })
  recordedTransactions: number;
  @ApiProperty({ example: '2026-11-25T01:25:42.123000+00:00' })
  createdAtUtc: string;

  static from(sync: WalletSync): WalletSyncDto {
    return {
      ...pick(sync, 'id', 'walletId', 'chainId', 'fromBlock', 'toBlock', 'status'),
      recordedTransactions: sync.recorded,
      createdAtUtc: formatUtc(sync.createdAt),
    };
  }
}
