import { BigIntType, Entity, EntityRepositoryType, Index, ManyToOne, Property } from '@mikro-orm/core';
import { Organization } from '../organizations/organization.entity';
import { BaseEntity } from '../../database/base.entity';
import { AuditEntryRepository } from './audit-entry.repository';
import type { AuditChanges } from './audit.rules';

@Entity({ tableName: 'audit_entry', repository: () => AuditEntryRepository })
@Index({ properties: ['organizationId', 'id'] })
export class AuditEntry extends BaseEntity {
  [EntityRepositoryType]?: AuditEntryRepository;

  /** Null only for operator actions that concern no single organization. */
  @ManyToOne(() => Organization, { mapToPk: true, nullable: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string | null;

  @Property({ type: 'text' })
  action: string;

  @Property({ type: 'uuid', nullable: true })
  apiKeyId: string | null;

  @Property({ type: 'text', nullable: true })
  keyPrefix: string | null;

  @Property({ type: 'text', nullable: true })
  requestId: string | null;

  @Property({ type: 'text', nullable: true })
  ip: string | null;

  @Property({ type: 'jsonb' })
  changes: AuditChanges;

  /**
   * Place in the organization's chain (1, 2, ...) and the chained hash (docs/API.md "Audit log").
   * Both are set while the entry is flushed, under the organization's chain lock, never by callers.
   */
  @Property({ type: new BigIntType('number'), nullable: true })
  chainSeq: number | null = null;

  @Property({ type: 'text', nullable: true })
  hash: string | null = null;

  constructor(init: Omit<AuditEntry, 'id' | 'createdAt' | 'chainSeq' | 'hash' | typeof EntityRepositoryType>) {
    super();
    Object.assign(this, init);
  }
}
