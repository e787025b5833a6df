import { ApiProperty } from '@nestjs/swagger';
import type { ChainFigures } from '../chain-metrics';

export class ChainStatusDto {
  @ApiProperty({ example: 1, description: 'Chain id, as configured in CHAIN_RPC_URLS.' })
  chainId: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 21000012,
    description: 'Latest block the node reported to the follower; null before its first step.',
  })
  headBlock: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 21000000,
    description: 'Highest block whose movements are recorded; null before the first.',
  })
  appliedBlock: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 12,
    description: 'headBlock − appliedBlock (at least CHAIN_CONFIRMATIONS when caught up).',
  })
  lagBlocks: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 144,
    description: 'Seconds between the block times of the head and of the applied block; null while either is unknown.',
  })
  lagSeconds: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the follower’s last step failed (it retries with backoff); null when it succeeded.',
  })
  lastError: string | null;

  static from(figures: ChainFigures): ChainStatusDto {
    return { ...figures };
  }
}

export class ChainStatusListDto {
  @ApiProperty({ type: [ChainStatusDto] })
  chains: ChainStatusDto[];
}
