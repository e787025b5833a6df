import { Entity, EntityRepositoryType, ManyToOne, PrimaryKeyProp, Property } from '@mikro-orm/core';
import { Organization } from '../organizations/organization.entity';
import { NftWhitelistRepository } from './nft-whitelist.repository';

/** The organization's whitelist switch. No row means the whitelist was never switched on. */
@Entity({ tableName: 'nft_whitelist', repository: () => NftWhitelistRepository })
export class NftWhitelist {
  [EntityRepositoryType]?: NftWhitelistRepository;
  [PrimaryKeyProp]?: 'organizationId';

  @ManyToOne(() => Organization, { primary: true, mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @Property({ type: 'boolean' })
  enabled: boolean;

  @Property({ type: 'timestamptz', length: 6 })
  updatedAt: Date;

  constructor(organizationId: string, enabled: boolean, updatedAt: Date) {
    this.organizationId = organizationId;
    this.enabled = enabled;
    this.updatedAt = updatedAt;
  }
}
