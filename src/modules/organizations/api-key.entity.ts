import { Entity, EntityRepositoryType, Index, ManyToOne, Property } from '@mikro-orm/core';
import type { Role } from '../../common/auth/principal';
import { BaseEntity } from '../../database/base.entity';
import { ApiKeyRepository } from './api-key.repository';
import { Organization } from './organization.entity';

@Entity({ tableName: 'api_key', repository: () => ApiKeyRepository })
@Index({ properties: ['organizationId', 'id'] })
export class ApiKey extends BaseEntity<'revokedAt'> {
  [EntityRepositoryType]?: ApiKeyRepository;

  /** Mapped as a relation only so inserts are ordered after the organization's. */
  @ManyToOne(() => Organization, { mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  @Property({ type: 'text' })
  name: string;

  @Property({ type: 'text[]' })
  roles: Role[];

  /** SHA-256 of the key: the key itself is shown once and never stored. */
  @Property({ type: 'text', unique: true, hidden: true })
  keyHash: string;

  @Property({ type: 'text' })
  keyPrefix: string;

  @Property({ type: 'timestamptz', length: 6, nullable: true })
  revokedAt: Date | null = null;

  constructor(init: { organizationId: string; name: string; roles: Role[]; keyHash: string; keyPrefix: string }) {
    super();
    Object.assign(this, init);
  }
}
