import { BigIntType, Entity, EntityRepositoryType, Index, ManyToOne, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../database/base.entity';
import { Organization } from '../organizations/organization.entity';
import { NftTransactionRepository } from './nft-transaction.repository';
import type { TransactionType } from './transaction.rules';

type ChainColumns = 'chainId' | 'blockNumber' | 'blockHash' | 'transactionHash' | 'logIndex' | 'batchIndex' | 'chainFrom' | 'chainTo';

export const TRANSACTION_SOURCES = ['api', 'chain'] as const;
export type TransactionSource = (typeof TRANSACTION_SOURCES)[number];
export const TRANSACTION_STATUSES = ['confirmed', 'reverted'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/**
 * An NFT movement as recorded: immutable once written, except that a chain movement whose block
 * a reorg replaced turns `reverted`. Chain rows carry their chain coordinates and their
 * `createdAt` is the block time.
 */
@Entity({ tableName: 'nft_transaction', repository: () => NftTransactionRepository })
@Index({ properties: ['organizationId', 'id'] })
export class NftTransaction extends BaseEntity<'source' | 'status' | ChainColumns> {
  [EntityRepositoryType]?: NftTransactionRepository;

  /** Mapped as a relation only so inserts are ordered after the organization's. */
  @ManyToOne(() => Organization, { mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @Property({ type: 'text' })
  type: TransactionType;

  @Property({ type: 'uuid' })
  tokenId: string;

  @Property({ type: 'uuid', nullable: true })
  fromWalletId: string | null;

  @Property({ type: 'uuid', nullable: true })
  toWalletId: string | null;

  /** uint256 decimal string; numeric(78,0) in the database. */
  @Property({ type: 'string', columnType: 'numeric(78,0)' })
  amount: string;

  @Property({ type: 'text' })
  source: TransactionSource = 'api';

  @Property({ type: 'text' })
  status: TransactionStatus = 'confirmed';

  @Property({ type: new BigIntType('number'), nullable: true })
  chainId: number | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  blockNumber: number | null = null;

  @Property({ type: 'text', nullable: true })
  blockHash: string | null = null;

  @Property({ type: 'text', nullable: true })
  transactionHash: string | null = null;

  @Property({ type: 'integer', nullable: true })
  logIndex: number | null = null;

  @Property({ type: 'integer', nullable: true })
  batchIndex: number | null = null;

  /** The on-chain sender and receiver (lowercase; the zero address for a mint or burn). */
  @Property({ type: 'text', nullable: true })
  chainFrom: string | null = null;

  @Property({ type: 'text', nullable: true })
  chainTo: string | null = null;

  constructor(init: Pick<NftTransaction, 'organizationId' | 'type' | 'tokenId' | 'fromWalletId' | 'toWalletId' | 'amount'>) {
    super();
    Object.assign(this, init);
  }
}
