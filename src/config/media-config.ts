import { isAbsolute, normalize } from 'node:path';
import { key32, Parsed, rule, url, variable } from './variables';

/** Token images and their thumbnails (docs/IMAGES.md "Images"). */
export interface MediaConfig {
  /** MEDIA_SIGNING_KEY: signs thumbnail links (HMAC-SHA256), 32 bytes. */
  readonly signingKey: Buffer;
  /** MEDIA_STORAGE: thumbnails in PostgreSQL, or in this absolute directory (created if missing). */
  readonly storage: { readonly kind: 'postgres' } | { readonly kind: 'directory'; readonly path: string };
  /** MEDIA_PUBLIC_URL: the origin of thumbnail links made outside a request (full webhook bodies); null: http://localhost:PORT. */
  readonly publicUrl: string | null;
}

/** Signs thumbnail links outside production; published here, so production refuses it. */
const DEVELOPMENT_MEDIA_SIGNING_KEY = Buffer.alloc(32, 'nft-wallet-development-media-key');

/**
 * MEDIA_STORAGE: `postgres`, or an absolute directory path (normalised, without a trailing slash).
 * A relative path would depend on the directory the process happens to start in.
 */
function parseMediaStorage(text: string): MediaConfig['storage'] | null {
  if (text === 'postgres') return { kind: 'postgres' };
  // eslint-disable-next-line no-control-regex -- a path with control characters is refused
  if (!isAbsolute(text) || /[\u0000-\u001f]/.test(text)) return null;
  const path = normalize(text);
  return { kind: 'directory', path: path.length > 1 ? path.replace(/\/+$/, '') : path };
}

/** The media variables; production requires MEDIA_SIGNING_KEY (see GUARDED) and refuses the development key. */
export const mediaVariables = (production: boolean) => ({
  MEDIA_SIGNING_KEY: variable<Buffer | null>(null, (t, fail) => {
    const key = key32(t);
    if (!key) return fail('must be 32 bytes encoded in base64');
    return production && key.equals(DEVELOPMENT_MEDIA_SIGNING_KEY)
      ? fail('must not use the development key when NODE_ENV=production')
      : key;
  }),
  MEDIA_PUBLIC_URL: url(null, ['http:', 'https:']),
  MEDIA_STORAGE: rule<MediaConfig['storage']>({ kind: 'postgres' }, 'postgres or an absolute directory path', parseMediaStorage),
});

export function mediaConfig(e: Parsed<ReturnType<typeof mediaVariables>>): MediaConfig {
  return {
    signingKey: e.MEDIA_SIGNING_KEY ?? DEVELOPMENT_MEDIA_SIGNING_KEY,
    storage: e.MEDIA_STORAGE,
    publicUrl: e.MEDIA_PUBLIC_URL === null ? null : e.MEDIA_PUBLIC_URL.replace(/\/+$/, ''),
  };
}
