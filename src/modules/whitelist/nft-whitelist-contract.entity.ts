import { Entity, EntityRepositoryType, ManyToOne, OptionalProps, PrimaryKey, PrimaryKeyProp, Property } from '@mikro-orm/core';
import { Organization } from '../organizations/organization.entity';
import { NftWhitelistContractRepository } from './nft-whitelist-contract.repository';

/** One whitelisted contract of an organization; the address is stored lowercase. */
@Entity({ tableName: 'nft_whitelist_contract', repository: () => NftWhitelistContractRepository })
export class NftWhitelistContract {
  [EntityRepositoryType]?: NftWhitelistContractRepository;
  [PrimaryKeyProp]?: ['organizationId', 'contractAddress'];
  [OptionalProps]?: 'createdAt';

  @ManyToOne(() => Organization, { primary: true, mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @PrimaryKey({ type: 'text' })
  contractAddress: string;

  @Property({ type: 'timestamptz', length: 6 })
  createdAt: Date = new Date();

  constructor(organizationId: string, contractAddress: string) {
    this.organizationId = organizationId;
    this.contractAddress = contractAddress;
  }
}
