import { Entity, EntityRepositoryType, Index, ManyToOne, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../database/base.entity';
import { Organization } from '../organizations/organization.entity';
import { WalletRepository } from './wallet.repository';

@Entity({ tableName: 'wallet', repository: () => WalletRepository })
@Index({ properties: ['organizationId', 'id'] })
export class Wallet extends BaseEntity<'name' | 'address'> {
  [EntityRepositoryType]?: WalletRepository;

  /** Mapped as a relation only so inserts are ordered after the organization's. */
  @ManyToOne(() => Organization, { mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @Property({ type: 'text', nullable: true })
  name: string | null = null;

  /** Lowercase; responses show the EIP-55 form. */
  @Property({ type: 'text', nullable: true })
  address: string | null = null;

  constructor(init: { organizationId: string; name?: string | null; address?: string | null }) {
    super();
    this.organizationId = init.organizationId;
    this.name = init.name ?? null;
    this.address = init.address ?? null;
  }
}
