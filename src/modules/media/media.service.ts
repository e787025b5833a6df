import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { MediaRepository } from './media.repository';
import { MediaState, mediaStateForImage, NO_MEDIA } from './media.rules';

/** A token as the media module needs it: which image, and what its webhooks carry. */
export interface TokenImage {
  id: string;
  organizationId: string;
  /** Lowercase. */
  contractAddress: string;
  image: string | null;
}

/**
 * What the tokens module asks of the media module (docs/IMAGES.md "Images"): every write that sets,
 * changes or clears a token's image tells it here, in the write's transaction, and gets the
 * state the write answers with; a refresh queues the image again.
 */
@Injectable()
export class MediaService {
  constructor(private readonly media: MediaRepository) {}

  /** A token's image was set, changed or cleared: fetching starts over (`pending`), or `none`. */
  async imageChanged(em: EntityManager, token: TokenImage): Promise<MediaState> {
    await this.media.setImage(em, token);
    return mediaStateForImage(token.image);
  }

  /** Fetch the token's image again, now, even when its URL was fetched before. Its state, `pending` or `none`. */
  async refresh(em: EntityManager, tokenId: string): Promise<MediaState> {
    return (await this.media.requestRefresh(em, tokenId)) ? mediaStateForImage('refresh') : NO_MEDIA;
  }

  /** The state of a token as stored (for an answer that did not change its image). */
  async stateOf(em: EntityManager, token: Pick<TokenImage, 'id' | 'image'>): Promise<MediaState> {
    if (token.image === null) return NO_MEDIA;
    return (await this.media.states(em, [token.id])).get(token.id) ?? mediaStateForImage(token.image);
  }
}
