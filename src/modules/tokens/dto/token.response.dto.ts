import { ApiProperty } from '@nestjs/swagger';
import { toChecksumAddress } from '../../../common/evm-address';
import { TokenMediaDto } from '../../media/dto/token-media.response.dto';
import type { MediaLinks } from '../../media/media-links';
import { SpamDto } from '../../spam/dto/spam.response.dto';
import type { TokenMetadata } from '../token-metadata.rules';
import { METADATA_STATUSES, MetadataStatus } from '../token.entity';
import type { TokenView } from '../token.view';

/** Every key is always present; a field that was never set is null. */
export class TokenMetadataDto implements TokenMetadata {
  @ApiProperty({ type: String, nullable: true })
  name: string | null;
  @ApiProperty({ type: String, nullable: true })
  description: string | null;
  @ApiProperty({ type: String, nullable: true })
  image: string | null;
  @ApiProperty({ type: String, nullable: true })
  animationUrl: string | null;
  @ApiProperty({ type: String, nullable: true })
  externalUrl: string | null;
  @ApiProperty({ type: String, nullable: true })
  backgroundColor: string | null;
  @ApiProperty({ type: 'integer', nullable: true })
  editionId: number | null;
  @ApiProperty({ type: 'integer', nullable: true })
  totalEdition: number | null;
  @ApiProperty({ type: String, nullable: true })
  creatorName: string | null;
  @ApiProperty({ type: String, nullable: true })
  creatorImageUrl: string | null;
  @ApiProperty({ type: String, nullable: true })
  creatorExternalPageUrl: string | null;
}

export class TokenDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  organizationId: string;
  @ApiProperty({ description: 'EIP-55 checksum form.', example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
  contractAddress: string;
  @ApiProperty({ description: 'uint256 as a decimal string.', example: '42' })
  blockchainTokenId: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: 'The EVM chain the token was first seen on (it is then chain-managed); null for tokens recorded through the API.',
  })
  chainId: number | null;
  @ApiProperty({
    enum: METADATA_STATUSES,
    description:
      'Chain tokens start `pending` while their metadata is fetched from tokenURI/uri, then turn `ok` or `failed` ' +
      '(see metadataError; POST /v1/tokens/{tokenId}/metadata/refresh fetches again). API tokens are always `ok`.',
  })
  metadataStatus: MetadataStatus;
  @ApiProperty({ type: String, nullable: true, description: 'Why the last metadata fetch failed; null otherwise.' })
  metadataError: string | null;
  @ApiProperty({ type: TokenMetadataDto })
  metadata: TokenMetadataDto;
  @ApiProperty({
    type: TokenMediaDto,
    description: 'The image named by `metadata.image`, fetched by the service, with thumbnails it serves itself (docs/IMAGES.md "Images").',
  })
  media: TokenMediaDto;
  @ApiProperty({
    type: SpamDto,
    nullable: true,
    description:
      'Its contract’s spam classification (docs/API.md "Activity, collections and spam"); null for tokens recorded through the API.',
  })
  spam: SpamDto | null;

  /** `links` signs the thumbnail links of this answer (on the request's origin). */
  static from(token: TokenView, links: MediaLinks): TokenDto {
    return {
      id: token.id,
      organizationId: token.organizationId,
      contractAddress: toChecksumAddress(token.contractAddress),
      blockchainTokenId: token.blockchainTokenId,
      chainId: token.chainId,
      metadataStatus: token.metadataStatus,
      metadataError: token.metadataError,
      metadata: {
        name: token.name,
        description: token.description,
        image: token.image,
        animationUrl: token.animationUrl,
        externalUrl: token.externalUrl,
        backgroundColor: token.backgroundColor,
        editionId: token.editionId,
        totalEdition: token.totalEdition,
        creatorName: token.creatorName,
        creatorImageUrl: token.creatorImageUrl,
        creatorExternalPageUrl: token.creatorExternalPageUrl,
      },
      media: TokenMediaDto.from(token.media, links),
      spam: token.spam === null ? null : { isSpam: token.spam.isSpam, reasons: [...token.spam.reasons], source: token.spam.source },
    };
  }
}
