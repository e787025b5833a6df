import { createHmac, timingSafeEqual } from 'node:crypto';
import type { BoundedFetchError } from '../../common/net/bounded-fetch';
import { METADATA_RETRY_DELAYS_MS } from '../chain/metadata/token-metadata-document.rules';

/**
 * Pure rules of token images (docs/IMAGES.md "Images"): where an image is fetched from, what its bytes
 * are, the sizes of its thumbnails, the signed links that serve them, and when a failure is tried
 * again.
 */

export const MEDIA_STATUSES = ['none', 'pending', 'ok', 'failed'] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

export const MEDIA_ERRORS = ['FETCH_FAILED', 'TOO_LARGE', 'TIMEOUT', 'UNSUPPORTED_MEDIA', 'BLOCKED_BY_URL_POLICY'] as const;
export type MediaError = (typeof MEDIA_ERRORS)[number];

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/svg+xml'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** Thumbnail widths by name, as links and the media object name them. */
export const THUMBNAIL_WIDTHS = { small: 64, medium: 256, large: 1024 } as const;
export type ThumbnailName = keyof typeof THUMBNAIL_WIDTHS;
export const WIDTHS: readonly number[] = Object.values(THUMBNAIL_WIDTHS);

/** The whole fetch of one image, redirects and body included. */
export const MEDIA_FETCH_TIMEOUT_MS = 15_000;
export const MEDIA_MAX_BYTES = 20 * 1024 * 1024;
export const MEDIA_MAX_REDIRECTS = 3;
/** How long a thumbnail link stays valid after the answer that gave it. */
export const MEDIA_LINK_TTL_SECONDS = 24 * 60 * 60;

/** A token's media as stored: what the API shows, thumbnails aside (they are links made per answer). */
export interface MediaState {
  status: MediaStatus;
  error: MediaError | null;
  width: number | null;
  height: number | null;
  contentType: ImageType | null;
  sha256: string | null;
}

export const NO_MEDIA: MediaState = { status: 'none', error: null, width: null, height: null, contentType: null, sha256: null };
export const PENDING_MEDIA: MediaState = { ...NO_MEDIA, status: 'pending' };

/** The state a write leaves: an image set or changed starts over, no image is `none`. */
export function mediaStateForImage(image: string | null): MediaState {
  return image === null ? NO_MEDIA : PENDING_MEDIA;
}

/** Whether two outcomes read the same to an integrator (a retry ending as the attempt before it). */
export function sameMediaOutcome(a: MediaState, b: MediaState): boolean {
  return (
    a.status === b.status &&
    a.error === b.error &&
    a.width === b.width &&
    a.height === b.height &&
    a.contentType === b.contentType &&
    a.sha256 === b.sha256
  );
}

/**
 * The errors tried again on the metadata schedule: a fetch that failed or ran out of time may pass
 * later; the others (too large, not an image, refused by the URL policy) stand until the image
 * changes or a refresh.
 */
const RETRIED_ERRORS: ReadonlySet<MediaError> = new Set(['FETCH_FAILED', 'TIMEOUT']);

/** A failed attempt: the error the token shows, which decides whether it is tried again. */
export class MediaFailure extends Error {
  readonly retryable: boolean;

  constructor(
    readonly error: MediaError,
    message: string,
  ) {
    super(message);
    this.name = 'MediaFailure';
    this.retryable = RETRIED_ERRORS.has(error);
  }
}

export type ImageLocation = { kind: 'data'; bytes: Buffer } | { kind: 'http'; url: string; viaGateway: boolean };

/**
 * Where a token's image is: decoded in place for `data:`, an http(s) URL otherwise (`ipfs://`
 * through the gateway, by `ipfsUrl`). `ar://` and any other scheme are not fetched.
 */
export function locateImage(image: string, ipfsUrl: (uri: string) => string): ImageLocation {
  const uri = image.trim();
  if (/^data:/i.test(uri)) return { kind: 'data', bytes: decodeImageDataUri(uri) };
  if (/^ipfs:/i.test(uri)) return { kind: 'http', url: ipfsUrl(uri), viaGateway: true };
  if (/^https?:\/\//i.test(uri)) return { kind: 'http', url: uri, viaGateway: false };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  throw new MediaFailure('FETCH_FAILED', scheme ? `${scheme}: images are not fetched` : 'the image is not an absolute URI');
}

/**
 * The bytes of a `data:` URI, base64 or percent-encoded. The media type it declares is ignored:
 * the bytes alone say what they are.
 */
export function decodeImageDataUri(uri: string): Buffer {
  const comma = uri.indexOf(',');
  if (comma < 0) throw new MediaFailure('FETCH_FAILED', 'malformed data: URI (no comma)');
  const params = uri.slice('data:'.length, comma).split(';').slice(1);
  const payload = uri.slice(comma + 1);
  if (params.some((p) => p.trim().toLowerCase() === 'base64')) {
    const compact = payload.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) throw new MediaFailure('FETCH_FAILED', 'malformed base64 in data: URI');
    return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
  }
  // Percent-decoding to bytes, not text: an SVG may be written either way, a PNG only as bytes.
  const bytes: number[] = [];
  for (let i = 0; i < payload.length; i++) {
    const c = payload.charCodeAt(i);
    if (c === 0x25) {
      const hex = payload.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new MediaFailure('FETCH_FAILED', 'malformed percent-encoding in data: URI');
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(payload[i], 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/**
 * What the bytes are, by their signature alone (never a declared type or an extension): PNG,
 * JPEG, GIF, WebP, AVIF (an ISO-BMFF `ftyp` box naming the avif or avis brand), or SVG (XML text
 * whose first element is `<svg`). Null for anything else.
 */
export function sniffImageType(bytes: Buffer): ImageType | null {
  const starts = (signature: number[], at = 0) => signature.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  const ascii = (from: number, to: number) => bytes.subarray(from, to).toString('latin1');
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 16 && ascii(4, 8) === 'ftyp') {
    const boxSize = bytes.readUInt32BE(0);
    const end = Math.min(bytes.length, boxSize >= 16 ? boxSize : 16);
    const brands = [ascii(8, 12)];
    for (let at = 16; at + 4 <= end; at += 4) brands.push(ascii(at, at + 4));
    if (brands.includes('avif') || brands.includes('avis')) return 'image/avif';
    return null;
  }
  return isSvgText(bytes) ? 'image/svg+xml' : null;
}

/** Leading BOM, whitespace, XML declaration, comments, processing instructions and a doctype, then `<svg`. */
function isSvgText(bytes: Buffer): boolean {
  let text = bytes.subarray(0, 4096).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  for (;;) {
    text = text.trimStart();
    if (text.startsWith('<?')) {
      const end = text.indexOf('?>');
      if (end < 0) return false;
      text = text.slice(end + 2);
    } else if (text.startsWith('<!--')) {
      const end = text.indexOf('-->');
      if (end < 0) return false;
      text = text.slice(end + 3);
    } else if (/^<!doctype/i.test(text)) {
      // An internal subset ([...]) may hold '>' characters.
      const subset = text.indexOf('[');
      const close = text.indexOf('>');
      const end = subset >= 0 && subset < close ? text.indexOf(']>', subset) + 1 : close;
      if (end <= 0) return false;
      text = text.slice(end + 1);
    } else {
      return /^<svg[\s>/]/.test(text);
    }
  }
}

/**
 * A thumbnail's size: `target` wide, or the original's width when narrower (never upscaled); the
 * height keeps the aspect, rounded, at least 1.
 */
export function thumbnailSize(width: number, height: number, target: number): { width: number; height: number } {
  const w = Math.min(width, target);
  return { width: w, height: Math.max(1, Math.round((height * w) / width)) };
}

/** The image's size as shown: EXIF orientations 5-8 turn it a quarter, swapping width and height. */
export function orientedSize(width: number, height: number, orientation: number | undefined): { width: number; height: number } {
  return orientation !== undefined && orientation >= 5 && orientation <= 8 ? { width: height, height: width } : { width, height };
}

/** Sorts a failed fetch into the error a token shows, and whether it is tried again. */
export function fetchFailureOf(error: BoundedFetchError): MediaFailure {
  switch (error.kind) {
    case 'blocked':
      return new MediaFailure('BLOCKED_BY_URL_POLICY', `the image URL ${error.message}`);
    case 'outsidePrefix':
      return new MediaFailure('BLOCKED_BY_URL_POLICY', error.message);
    case 'timeout':
      return new MediaFailure('TIMEOUT', error.message);
    case 'tooLarge':
      return new MediaFailure('TOO_LARGE', error.message);
    case 'redirects':
      return new MediaFailure('FETCH_FAILED', error.message);
    case 'status': {
      return new MediaFailure('FETCH_FAILED', error.message);
    }
    default:
      return new MediaFailure('FETCH_FAILED', error.message);
  }
}

/**
 * When to try again after `attempts` failed attempts (from 1), on the metadata schedule (about
 * 2 s, 10 s, 1 min, 5 min, 30 min); null when the failure stands.
 */
export function nextMediaAttempt(attempts: number, retryable: boolean, now: Date): Date | null {
  if (!retryable || attempts < 1 || attempts > METADATA_RETRY_DELAYS_MS.length) return null;
  return new Date(now.getTime() + METADATA_RETRY_DELAYS_MS[attempts - 1]);
}

/** `sig` of a thumbnail link: unpadded base64url of HMAC-SHA256(key, "{sha256}/{width}/{exp}"). */
export function mediaLinkSignature(key: Buffer, sha256: string, width: number, exp: number): string {
  return createHmac('sha256', key).update(`${sha256}/${width}/${exp}`).digest('base64url');
}

/** Whether a link's `exp` and `sig` are valid now (`nowSeconds`, unix time). */
export function isValidMediaLink(
  key: Buffer,
  link: { sha256: string; width: number; exp: string | undefined; sig: string | undefined },
  nowSeconds: number,
): boolean {
  if (link.exp === undefined || link.sig === undefined || !/^\d{1,12}$/.test(link.exp)) return false;
  const exp = Number(link.exp);
  if (exp < nowSeconds) return false;
  const expected = Buffer.from(mediaLinkSignature(key, link.sha256, link.width, exp));
  const given = Buffer.from(link.sig);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The path and query of a thumbnail link, `exp` seconds since the epoch. */
export function mediaLinkPath(key: Buffer, sha256: string, width: number, exp: number): string {
  return `/v1/media/${sha256}/${width}.webp?exp=${exp}&sig=${mediaLinkSignature(key, sha256, width, exp)}`;
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
