import { createHmac } from 'node:crypto';
import { BoundedFetchError } from '../../common/net/bounded-fetch';
import {
  decodeImageDataUri,
  fetchFailureOf,
  isValidMediaLink,
  locateImage,
  mediaLinkPath,
  mediaLinkSignature,
  MediaFailure,
  nextMediaAttempt,
  orientedSize,
  sameMediaOutcome,
  NO_MEDIA,
  PENDING_MEDIA,
  sniffImageType,
  thumbnailSize,
} from './media.rules';

const bytes = (...values: (number | string)[]) =>
  Buffer.concat(values.map((v) => (typeof v === 'string' ? Buffer.from(v, 'latin1') : Buffer.from([v]))));

describe('sniffImageType', () => {
  it.each([
    ['PNG', bytes(0x89, 'PNG\r\n', 0x1a, '\n', 'rest'), 'image/png'],
    ['JPEG', bytes(0xff, 0xd8, 0xff, 0xe0, 'JFIF'), 'image/jpeg'],
    ['GIF87a', bytes('GIF87a....'), 'image/gif'],
    ['GIF89a', bytes('GIF89a....'), 'image/gif'],
    ['WebP', bytes('RIFF', 0, 0, 0, 0, 'WEBPVP8 '), 'image/webp'],
    ['AVIF (major brand)', bytes(0, 0, 0, 0x1c, 'ftypavif', 0, 0, 0, 0, 'mif1miaf'), 'image/avif'],
    ['AVIF (compatible brand)', bytes(0, 0, 0, 0x18, 'ftypmif1', 0, 0, 0, 0, 'avif'), 'image/avif'],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
    [
      'SVG after a BOM, declaration, comment and doctype with a subset',
      Buffer.from('\ufeff <?xml version="1.0"?>\n<!-- a > b --><!DOCTYPE svg [<!ENTITY a "<b>">]>\n<svg>'),
      'image/svg+xml',
    ],
  ])('%s', (_label, input, type) => {
    expect(sniffImageType(input)).toBe(type);
  });

  it.each([
    ['HEIC (an ftyp box without the avif brand)', bytes(0, 0, 0, 0x18, 'ftypheic', 0, 0, 0, 0, 'mif1heic')],
    ['HTML', Buffer.from('<!doctype html><html><svg></svg></html>')],
    ['text', Buffer.from('hello')],
    ['a BMP', bytes('BM', 0, 0, 0, 0)],
    ['nothing', Buffer.alloc(0)],
    ['a truncated PNG signature', bytes(0x89, 'PNG')],
    ['an svg-named element', Buffer.from('<svgx/>')],
  ])('nothing for %s', (_label, input) => {
    expect(sniffImageType(input)).toBeNull();
  });
});

describe('locateImage', () => {
  const ipfs = (uri: string) => `https://gw.example/ipfs/${uri.slice('ipfs://'.length)}`;

  it('fetches http(s) as given and ipfs:// through the gateway', () => {
    expect(locateImage('https://cdn.example/a.png', ipfs)).toEqual({ kind: 'http', url: 'https://cdn.example/a.png', viaGateway: false });
    expect(locateImage('ipfs://bafy/1.png', ipfs)).toEqual({ kind: 'http', url: 'https://gw.example/ipfs/bafy/1.png', viaGateway: true });
  });

  it('decodes data: URIs, base64 or percent-encoded, whatever type they declare', () => {
    expect(locateImage('data:image/png;base64,iVBORw0KGgo=', ipfs)).toEqual({
      kind: 'data',
      bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    });
    expect(decodeImageDataUri('data:text/plain,%3Csvg%20a%3D%22%C3%A9%22%2F%3E')).toEqual(Buffer.from('<svg a="é"/>'));
    expect(decodeImageDataUri('data:,<svg/>')).toEqual(Buffer.from('<svg/>'));
  });

  it.each(['ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U', 'ftp://example.com/a.png', 'data:image/png;base64,@@', 'data:,%zz'])(
    'does not fetch %s (FETCH_FAILED, tried again on the schedule like every FETCH_FAILED)',
    (uri) => {
      expect(() => locateImage(uri, ipfs)).toThrow(MediaFailure);
      try {
        locateImage(uri, ipfs);
      } catch (error) {
        expect(error).toMatchObject({ error: 'FETCH_FAILED', retryable: true });
      }
    },
  );
});

describe('thumbnail sizes', () => {
  it('keeps the aspect, rounds the height, at least 1, never upscales', () => {
    expect(thumbnailSize(2000, 1000, 256)).toEqual({ width: 256, height: 128 });
    expect(thumbnailSize(1000, 333, 64)).toEqual({ width: 64, height: 21 });
    expect(thumbnailSize(3000, 10, 64)).toEqual({ width: 64, height: 1 });
    expect(thumbnailSize(40, 30, 1024)).toEqual({ width: 40, height: 30 });
  });

  it('swaps width and height for EXIF orientations that turn the image', () => {
    expect(orientedSize(40, 30, 6)).toEqual({ width: 30, height: 40 });
    expect(orientedSize(40, 30, 3)).toEqual({ width: 40, height: 30 });
    expect(orientedSize(40, 30, undefined)).toEqual({ width: 40, height: 30 });
  });
});

describe('failures', () => {
  it.each([
    ['blocked', null, 'BLOCKED_BY_URL_POLICY', false],
    ['timeout', null, 'TIMEOUT', true],
    ['tooLarge', null, 'TOO_LARGE', false],
    ['network', null, 'FETCH_FAILED', true],
    ['redirects', null, 'FETCH_FAILED', true],
    ['status', 503, 'FETCH_FAILED', true],
    ['status', 404, 'FETCH_FAILED', true],
    ['status', 403, 'FETCH_FAILED', true],
  ] as const)('%s %s is %s, retried: %s', (kind, status, code, retryable) => {
    expect(fetchFailureOf(new BoundedFetchError(kind, 'x', status))).toMatchObject({ error: code, retryable });
  });

  it('retries on the metadata schedule, then stands', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect([1, 2, 3, 4, 5].map((n) => nextMediaAttempt(n, true, now)!.getTime() - now.getTime())).toEqual([
      2_000, 10_000, 60_000, 300_000, 1_800_000,
    ]);
    expect(nextMediaAttempt(6, true, now)).toBeNull();
    expect(nextMediaAttempt(1, false, now)).toBeNull();
  });

  it('tells a retry that ended as before from a change', () => {
    const failed = { ...NO_MEDIA, status: 'failed' as const, error: 'TIMEOUT' as const };
    expect(sameMediaOutcome(failed, { ...failed })).toBe(true);
    expect(sameMediaOutcome(failed, { ...failed, error: 'FETCH_FAILED' })).toBe(false);
    expect(sameMediaOutcome(PENDING_MEDIA, failed)).toBe(false);
  });
});

describe('signed links', () => {
  const key = Buffer.alloc(32, 7);
  const sha = 'a'.repeat(64);

  it('signs "{sha256}/{width}/{exp}" with HMAC-SHA256, unpadded base64url', () => {
    const expected = createHmac('sha256', key).update(`${sha}/256/1900000000`).digest('base64').replace(/=+$/, '');
    expect(mediaLinkSignature(key, sha, 256, 1900000000)).toBe(expected.replace(/\+/g, '-').replace(/\//g, '_'));
    expect(mediaLinkPath(key, sha, 64, 5)).toBe(`/v1/media/${sha}/64.webp?exp=5&sig=${mediaLinkSignature(key, sha, 64, 5)}`);
  });

  it('accepts a valid link until exp, and nothing tampered', () => {
    const sig = mediaLinkSignature(key, sha, 256, 1000);
    const link = { sha256: sha, width: 256, exp: '1000', sig };
    expect(isValidMediaLink(key, link, 999)).toBe(true);
    expect(isValidMediaLink(key, link, 1000)).toBe(true);
    expect(isValidMediaLink(key, link, 1001)).toBe(false);
    expect(isValidMediaLink(key, { ...link, width: 64 }, 999)).toBe(false);
    expect(isValidMediaLink(key, { ...link, exp: '1001' }, 999)).toBe(false);
    expect(isValidMediaLink(key, { ...link, sha256: 'b'.repeat(64) }, 999)).toBe(false);
    expect(isValidMediaLink(key, { ...link, sig: `${sig}A` }, 999)).toBe(false);
    expect(isValidMediaLink(key, { ...link, sig: undefined }, 999)).toBe(false);
    expect(isValidMediaLink(key, { ...link, exp: '1e3' }, 999)).toBe(false);
    expect(isValidMediaLink(Buffer.alloc(32, 8), link, 999)).toBe(false);
  });
});
