import { MediaState, NO_MEDIA, PENDING_MEDIA } from './media.rules';

const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * The media state of the token aliased `tokenAlias` in the caller's query, as one JSON column:
 * reads of tokens (one token, a balances page) stay one statement, one index probe per token.
 * Read it back with {@link mediaStateFromColumn}.
 */
export function tokenMediaColumnSql(tokenAlias: string): string {
  if (!SAFE_IDENTIFIER.test(tokenAlias)) throw new Error('unsafe SQL identifier');
  return `(select json_build_object('status', tm."status", 'error', tm."error", 'width', tm."width", 'height', tm."height",
                                    'contentType', tm."content_type", 'sha256', tm."sha256")
             from "token_media" tm where tm."token_id" = ${tokenAlias}."id")`;
}

/** A token's media from its image and the column of {@link tokenMediaColumnSql}. */
export function mediaStateFromColumn(image: string | null, value: unknown): MediaState {
  if (image === null) return NO_MEDIA;
  if (value === null || value === undefined) return PENDING_MEDIA;
  const state = (typeof value === 'string' ? JSON.parse(value) : value) as MediaState;
  return {
    status: state.status,
    error: state.error ?? null,
    width: state.width ?? null,
    height: state.height ?? null,
    contentType: state.contentType ?? null,
    sha256: state.sha256 ?? null,
  };
}
