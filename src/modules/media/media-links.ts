import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { MEDIA_LINK_TTL_SECONDS, mediaLinkPath, THUMBNAIL_WIDTHS, ThumbnailName } from './media.rules';

export type ThumbnailLinks = Record<ThumbnailName, string>;

/** A host as a Host or X-Forwarded-Host header may name it: a name or an address, and a port. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Signed thumbnail links for one answer: on the origin the request came to, valid 24 h from now. */
export class MediaLinks {
  constructor(
    private readonly origin: string,
    private readonly key: Buffer,
    private readonly exp: number,
  ) {}

  thumbnails(sha256: string): ThumbnailLinks {
    const link = (width: number) => `${this.origin}${mediaLinkPath(this.key, sha256, width, this.exp)}`;
    return { small: link(THUMBNAIL_WIDTHS.small), medium: link(THUMBNAIL_WIDTHS.medium), large: link(THUMBNAIL_WIDTHS.large) };
  }
}

/**
 * Makes the links of an answer. The origin is the request's: its scheme and Host, which Express
 * takes from X-Forwarded-Proto and X-Forwarded-Host only when the peer is a trusted proxy
 * (TRUST_PROXY), so a client cannot point another's links elsewhere.
 */
@Injectable()
export class MediaLinkSigner {
  constructor(private readonly config: AppConfig) {}

  forRequest(req: Request, nowMs = Date.now()): MediaLinks {
    const host = req.host ?? '';
    const origin = `${req.protocol === 'https' ? 'https' : 'http'}://${HOST.test(host) ? host : 'localhost'}`;
    return new MediaLinks(origin, this.config.media.signingKey, Math.floor(nowMs / 1000) + MEDIA_LINK_TTL_SECONDS);
  }

  /** Links made outside a request (the `data` of a full webhook body): MEDIA_PUBLIC_URL's origin. */
  forWebhooks(nowMs = Date.now()): MediaLinks {
    const origin = this.config.media.publicUrl ?? `http://localhost:${this.config.port}`;
    return new MediaLinks(origin, this.config.media.signingKey, Math.floor(nowMs / 1000) + MEDIA_LINK_TTL_SECONDS);
  }
}
