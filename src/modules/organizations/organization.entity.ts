import { Entity, EntityRepositoryType, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../database/base.entity';
import { OrganizationRepository } from './organization.repository';

@Entity({ tableName: 'organization', repository: () => OrganizationRepository })
export class Organization extends BaseEntity {
  [EntityRepositoryType]?: OrganizationRepository;

  @Property({ type: 'text' })
  name: string;

  constructor(name: string) {
    super();
    this.name = name;
  }
}
