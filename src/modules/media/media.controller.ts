import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import {
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { PublicRoute } from '../../common/auth/access';
import { DomainError } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { MediaStorage } from './media-storage';
import { isValidMediaLink, SHA256_HEX, WIDTHS } from './media.rules';

const linkInvalid = () =>
  new DomainError(403, 'MEDIA_LINK_INVALID', 'This thumbnail link is not valid or has expired: read the token again for a fresh link.');

/**
 * Thumbnails of token images (docs/IMAGES.md "Images"). Public, because an `<img>` sends no API key:
 * the link itself is the credential, signed with MEDIA_SIGNING_KEY and valid until its `exp`.
 * The only answer of the API that a browser or proxy may cache: its bytes never change.
 */
@ApiTags('Media')
@PublicRoute()
// Not counted against the per-IP limit: one wallet screen loads a thumbnail per token, and a
// link only serves what its signature names (checked before anything is read).
@SkipThrottle()
@Controller('v1/media')
export class MediaController {
  constructor(
    private readonly config: AppConfig,
    private readonly storage: MediaStorage,
  ) {}

  @Get(':sha256/:file')
  @ApiOperation({
    operationId: 'getThumbnail',
    summary: 'A thumbnail of a token image, WebP, by a signed link from the token’s `media.thumbnails` (no API key)',
    description:
      'Public: the signed link is the credential. Cached by browsers and proxies for a day (`Cache-Control: public, max-age=86400, immutable`).',
  })
  @ApiParam({
    name: 'sha256',
    description: 'SHA-256 of the original image, lowercase hex.',
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  })
  @ApiParam({ name: 'file', description: 'The width and format: `64.webp`, `256.webp` or `1024.webp`.', example: '256.webp' })
  // Not `required` in the document's sense: a link without them is not malformed (400) but refused
  // like any link whose signature does not hold (403 MEDIA_LINK_INVALID).
  @ApiQuery({ name: 'exp', required: false, description: 'Unix seconds after which the link is refused; part of every link.' })
  @ApiQuery({ name: 'sig', required: false, description: 'The link’s signature; part of every link.' })
  @ApiProduces('image/webp')
  @ApiOkResponse({
    description: 'The thumbnail (image/webp).',
    content: { 'image/webp': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiForbiddenResponse({ description: 'MEDIA_LINK_INVALID: `sig` missing or wrong, or `exp` passed.' })
  @ApiNotFoundResponse({ description: 'MEDIA_NOT_FOUND: a rightly signed link naming no stored image or width.' })
  async thumbnail(
    @Param('sha256') sha256: string,
    @Param('file') file: string,
    @Query('exp') exp: unknown,
    @Query('sig') sig: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const width = /^(\d{1,9})\.webp$/.exec(file);
    if (!width || !SHA256_HEX.test(sha256) || typeof exp !== 'string' || typeof sig !== 'string') throw linkInvalid();
    const link = { sha256, width: Number(width[1]), exp, sig };
    if (!isValidMediaLink(this.config.media.signingKey, link, Math.floor(Date.now() / 1000))) throw linkInvalid();
    const bytes = WIDTHS.includes(link.width) ? await this.storage.get(sha256, link.width) : null;
    if (bytes === null) throw new DomainError(404, 'MEDIA_NOT_FOUND', `No thumbnail ${link.width} pixels wide of image ${sha256}.`);
    res
      .status(200)
      .type('image/webp')
      .set('cache-control', 'public, max-age=86400, immutable')
      .set('x-content-type-options', 'nosniff')
      .send(bytes);
  }
}
