import { Entity, EntityRepositoryType, Index, ManyToOne, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../database/base.entity';
import { Organization } from '../organizations/organization.entity';
import { NftTransactionRepository } from './nft-transaction.repository';
import type { TransactionType } from './transaction.rules';

/** An NFT movement as recorded: immutable once written. */
@Entity({ tableName: 'nft_transaction', repository: () => NftTransactionRepository })
@Index({ properties: ['organizationId', 'id'] })
export class NftTransaction extends BaseEntity {
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

  constructor(init: Pick<NftTransaction, 'organizationId' | 'type' | 'tokenId' | 'fromWalletId' | 'toWalletId' | 'amount'>) {
    super();
    Object.assign(this, init);
  }
}
