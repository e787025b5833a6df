import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsMetadataUrl, METADATA_INTEGER_MAX, METADATA_TEXT_MAX_LENGTH } from '../token-metadata.rules';

const URL_DOC = 'http(s), ipfs:// or ar:// URL, or a data: URI; at most 2,048 characters.';
const TEXT_DOC = 'At most 2,048 characters.';
const INT_DOC = 'Non-negative integer.';

/** Any subset of the metadata fields. On PATCH, an absent field is kept and null clears it. */
export class TokenMetadataRequestDto {
  @ApiPropertyOptional({ type: String, nullable: true, description: TEXT_DOC })
  @IsOptional()
  @IsString()
  @MaxLength(METADATA_TEXT_MAX_LENGTH)
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: TEXT_DOC })
  @IsOptional()
  @IsString()
  @MaxLength(METADATA_TEXT_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: URL_DOC,
    example: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi',
  })
  @IsOptional()
  @IsMetadataUrl()
  image?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: URL_DOC })
  @IsOptional()
  @IsMetadataUrl()
  animationUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: URL_DOC })
  @IsOptional()
  @IsMetadataUrl()
  externalUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: TEXT_DOC, example: 'ffffff' })
  @IsOptional()
  @IsString()
  @MaxLength(METADATA_TEXT_MAX_LENGTH)
  backgroundColor?: string | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, description: INT_DOC })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(METADATA_INTEGER_MAX)
  editionId?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, description: INT_DOC })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(METADATA_INTEGER_MAX)
  totalEdition?: number | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: TEXT_DOC })
  @IsOptional()
  @IsString()
  @MaxLength(METADATA_TEXT_MAX_LENGTH)
  creatorName?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: URL_DOC })
  @IsOptional()
  @IsMetadataUrl()
  creatorImageUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: URL_DOC })
  @IsOptional()
  @IsMetadataUrl()
  creatorExternalPageUrl?: string | null;
}
