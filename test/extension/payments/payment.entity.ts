import { Entity, EntityRepositoryType, Index, ManyToOne, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../../src/database/base.entity';
import { Organization } from '../../../src/modules/organizations/organization.entity';
import { PaymentRepository } from './payment.repository';

@Entity({ tableName: 'payment', repository: () => PaymentRepository })
@Index({ properties: ['organizationId', 'id'] })
export class Payment extends BaseEntity<'reference'> {
  [EntityRepositoryType]?: PaymentRepository;

  /** Mapped as a relation only so inserts are ordered after the organization's. */
  @ManyToOne(() => Organization, { mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @Property({ type: 'uuid' })
  walletId: string;

  /** Decimal string of a non-negative integer (smallest unit), as the contract writes amounts. */
  @Property({ type: 'numeric', precision: 78, scale: 0 })
  amount: string;

  @Property({ type: 'text', nullable: true })
  reference: string | null = null;

  constructor(init: { organizationId: string; walletId: string; amount: string; reference?: string | null }) {
    super();
    this.organizationId = init.organizationId;
    this.walletId = init.walletId;
    this.amount = init.amount;
    this.reference = init.reference ?? null;
  }
}
