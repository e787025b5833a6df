import { ApiProperty } from '@nestjs/swagger';
import { toChecksumAddress } from '../../../common/evm-address';
import { formatDbTimestamp } from '../../../common/time';
import type { IndexedTransfer } from '../contract-index.rules';
import type { HolderRow, OwnerRow } from '../contract-reads.repository';
import type { IndexedContract } from '../indexed-contract.repository';
import { SpamDto } from '../../spam/dto/spam.response.dto';
import type { SpamView } from '../../spam/spam.rules';

export class ContractDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ type: 'integer', example: 1 })
  chainId: number;
  @ApiProperty({ description: 'EIP-55.', example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  address: string;
  @ApiProperty({ type: 'integer', description: 'First block whose transfers count.' })
  fromBlock: number;
  @ApiProperty({
    enum: ['erc721', 'erc1155'],
    nullable: true,
    description: 'From ERC-165; null when the contract declares neither (or the address has no code).',
  })
  standard: 'erc721' | 'erc1155' | null;
  @ApiProperty({
    enum: ['backfilling', 'live'],
    description: '`live` once the index has reached the head less CHAIN_CONFIRMATIONS; it never goes past that.',
  })
  status: 'backfilling' | 'live';
  @ApiProperty({ type: 'integer', description: 'Last block whose transfers the reads include; `fromBlock` − 1 before the first.' })
  indexedBlock: number;
  @ApiProperty({ example: '2026-11-27T07:30:00.123456+00:00' })
  createdAtUtc: string;
  @ApiProperty({
    type: SpamDto,
    description: 'The contract’s spam classification as this organization sees it (the same as on its tokens).',
  })
  spam: SpamDto;

  static from(contract: IndexedContract, spam: SpamView): ContractDto {
    return {
      id: contract.id,
      chainId: contract.chainId,
      address: toChecksumAddress(contract.address),
      fromBlock: contract.fromBlock,
      standard: contract.standard,
      status: contract.status,
      indexedBlock: contract.indexedBlock,
      createdAtUtc: formatDbTimestamp(contract.createdAt),
      spam: { isSpam: spam.isSpam, reasons: [...spam.reasons], source: spam.source },
    };
  }
}

export class ContractListDto {
  @ApiProperty({ type: [ContractDto], description: 'Oldest first.' })
  contracts: ContractDto[];
  @ApiProperty({ type: String, nullable: true })
  nextPageKey: string | null;
}

export class HolderDto {
  @ApiProperty({ description: 'EIP-55; never the zero address.' })
  address: string;
  @ApiProperty({ type: 'integer', description: 'Token ids held (balance above zero).' })
  tokenCount: number;
  @ApiProperty({ description: 'Sum of the balances held, a decimal string.', example: '3' })
  amount: string;

  static from(row: HolderRow): HolderDto {
    return { address: toChecksumAddress(row.holder), tokenCount: row.tokenCount, amount: row.amount };
  }
}

export class HoldersDto {
  @ApiProperty({ type: 'integer', description: 'The block the holdings are at; the same on every page of one walk.' })
  blockNumber: number;
  @ApiProperty({ type: [HolderDto], description: 'By amount (numerically) descending, then lowercase address ascending.' })
  holders: HolderDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Carries the block: the next page answers the same blockNumber.' })
  nextPageKey: string | null;
}

export class OwnerDto {
  @ApiProperty({ description: 'EIP-55; never the zero address.' })
  address: string;
  @ApiProperty({ description: 'Balance of the token, a decimal string.', example: '1' })
  amount: string;

  static from(row: OwnerRow): OwnerDto {
    return { address: toChecksumAddress(row.holder), amount: row.amount };
  }
}

export class OwnersDto {
  @ApiProperty({ type: 'integer' })
  blockNumber: number;
  @ApiProperty({ type: [OwnerDto], description: 'By amount (numerically) descending, then lowercase address ascending.' })
  owners: OwnerDto[];
}

export class ContractTransferDto {
  @ApiProperty({ type: 'integer' })
  blockNumber: number;
  @ApiProperty()
  blockHash: string;
  @ApiProperty()
  transactionHash: string;
  @ApiProperty({ type: 'integer' })
  logIndex: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Position of the id/value pair in a TransferBatch; null otherwise.' })
  batchIndex: number | null;
  @ApiProperty({ description: 'EIP-55; the zero address for a mint.' })
  from: string;
  @ApiProperty({ description: 'EIP-55; the zero address for a burn.' })
  to: string;
  @ApiProperty({ example: '42' })
  blockchainTokenId: string;
  @ApiProperty({ example: '1' })
  amount: string;

  static from(t: IndexedTransfer): ContractTransferDto {
    return {
      blockNumber: t.blockNumber,
      blockHash: t.blockHash,
      transactionHash: t.transactionHash,
      logIndex: t.logIndex,
      batchIndex: t.batchIndex,
      from: toChecksumAddress(t.from),
      to: toChecksumAddress(t.to),
      blockchainTokenId: t.tokenId,
      amount: t.amount,
    };
  }
}

export class ContractTransfersDto {
  @ApiProperty({ type: [ContractTransferDto], description: 'Chain order: blockNumber, logIndex, batchIndex.' })
  transfers: ContractTransferDto[];
  @ApiProperty({ type: String, nullable: true })
  nextPageKey: string | null;
}
