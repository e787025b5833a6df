import { BigIntType, Entity, EntityRepositoryType, Index, ManyToOne, Property, Unique } from '@mikro-orm/core';
import { BaseEntity } from '../../database/base.entity';
import { Organization } from '../organizations/organization.entity';
import type { TokenMetadata } from './token-metadata.rules';
import { TokenRepository } from './token.repository';

type MetadataColumns = keyof TokenMetadata;
type ChainColumns = 'chainId' | 'chainStandard' | 'metadataStatus' | 'metadataError' | 'metadataAttempts' | 'metadataNextAttemptAt';

export const METADATA_STATUSES = ['pending', 'ok', 'failed'] as const;
export type MetadataStatus = (typeof METADATA_STATUSES)[number];
export type ChainStandard = 'erc721' | 'erc1155';

/** The metadata fields are columns (not a JSON blob) so each one is typed and constrained. */
@Entity({ tableName: 'token', repository: () => TokenRepository })
// NULLS NOT DISTINCT in the migration: API tokens (chainId null) stay unique among themselves.
@Unique({ properties: ['organizationId', 'chainId', 'contractAddress', 'blockchainTokenId'] })
@Index({ properties: ['organizationId', 'id'] })
export class Token extends BaseEntity<MetadataColumns | ChainColumns> implements TokenMetadata {
  [EntityRepositoryType]?: TokenRepository;

  /** Mapped as a relation only so inserts are ordered after the organization's. */
  @ManyToOne(() => Organization, { mapToPk: true, deleteRule: 'cascade', fieldName: 'organization_id' })
  organizationId: string;

  /** Lowercase; responses show the EIP-55 form. */
  @Property({ type: 'text' })
  contractAddress: string;

  /** uint256 as a canonical decimal string. */
  @Property({ type: 'text' })
  blockchainTokenId: string;

  /** The chain the token was first seen on; null for tokens recorded through the API. */
  @Property({ type: new BigIntType('number'), nullable: true })
  chainId: number | null = null;

  /** Which standard's URI call fetches the metadata of a chain token; null for API tokens. */
  @Property({ type: 'text', nullable: true })
  chainStandard: ChainStandard | null = null;

  @Property({ type: 'text' })
  metadataStatus: MetadataStatus = 'ok';

  @Property({ type: 'text', nullable: true })
  metadataError: string | null = null;

  @Property({ type: 'integer' })
  metadataAttempts: number = 0;

  @Property({ type: 'timestamptz', length: 6, nullable: true })
  metadataNextAttemptAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  name: string | null = null;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Property({ type: 'text', nullable: true })
  image: string | null = null;

  @Property({ type: 'text', nullable: true })
  animationUrl: string | null = null;

  @Property({ type: 'text', nullable: true })
  externalUrl: string | null = null;

  @Property({ type: 'text', nullable: true })
  backgroundColor: string | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  editionId: number | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  totalEdition: number | null = null;

  @Property({ type: 'text', nullable: true })
  creatorName: string | null = null;

  @Property({ type: 'text', nullable: true })
  creatorImageUrl: string | null = null;

  @Property({ type: 'text', nullable: true })
  creatorExternalPageUrl: string | null = null;

  constructor(init: { organizationId: string; contractAddress: string; blockchainTokenId: string; metadata: TokenMetadata }) {
    super();
    this.organizationId = init.organizationId;
    this.contractAddress = init.contractAddress;
    this.blockchainTokenId = init.blockchainTokenId;
    Object.assign(this, init.metadata);
  }
}
