import { ApiProperty } from '@nestjs/swagger';
import type { MediaLinks } from '../media-links';
import { IMAGE_TYPES, ImageType, MEDIA_ERRORS, MEDIA_STATUSES, MediaError, MediaState, MediaStatus } from '../media.rules';

export class ThumbnailLinksDto {
  @ApiProperty({ format: 'uri', description: '64 pixels wide (or the original’s width when narrower), WebP.' })
  small: string;
  @ApiProperty({ format: 'uri', description: '256 pixels wide (or narrower), WebP.' })
  medium: string;
  @ApiProperty({ format: 'uri', description: '1024 pixels wide (or narrower), WebP.' })
  large: string;
}

/** Every key is always present; all but `status` and `error` are null unless `status` is `ok`. */
export class TokenMediaDto {
  @ApiProperty({
    enum: MEDIA_STATUSES,
    description:
      '`none`: no image. `pending`: being fetched (what the write that set or changed the image answers). `ok`: fetched, ' +
      'thumbnails ready. `failed`: see `error`.',
  })
  status: MediaStatus;
  @ApiProperty({
    enum: MEDIA_ERRORS,
    nullable: true,
    description:
      '`failed` only. FETCH_FAILED and TIMEOUT are retried (after about 2 s, 10 s, 1 min, 5 min and 30 min); the others stand ' +
      'until the image changes or POST /v1/tokens/{tokenId}/metadata/refresh.',
  })
  error: MediaError | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The original’s width in pixels as shown (orientation applied).' })
  width: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The original’s height in pixels as shown.' })
  height: number | null;
  @ApiProperty({ enum: IMAGE_TYPES, nullable: true, description: 'The original’s type, judged by its bytes.' })
  contentType: ImageType | null;
  @ApiProperty({ type: String, nullable: true, pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the original bytes, lowercase hex.' })
  sha256: string | null;
  @ApiProperty({
    type: ThumbnailLinksDto,
    nullable: true,
    description: 'Signed links, valid 24 h, on the origin the request came to; no API key needed (an <img> can load them).',
  })
  thumbnails: ThumbnailLinksDto | null;

  static from(state: MediaState, links: MediaLinks): TokenMediaDto {
    return { ...state, thumbnails: state.status === 'ok' && state.sha256 !== null ? links.thumbnails(state.sha256) : null };
  }
}
