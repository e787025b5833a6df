import { isUnderPrefix, TrustedPrefix } from '../../../common/net/bounded-fetch';
import { isShowableMetadataLink, METADATA_TEXT_MAX_LENGTH } from '../../tokens/token-metadata.rules';

/**
 * Pure rules of fetching a chain token's metadata (docs/CHAIN.md "Following a chain"): where the
 * token URI points, how a `data:` URI decodes, how the JSON document maps to the token's fields,
 * and when a failed fetch is tried again.
 */

/**
 * Whether a failed fetch got an answer from the document's server: `unreachable` (a timeout or a
 * connection failure, what a contract's circuit breaker counts), `answered` (an HTTP status, a
 * body too large or not JSON), or `none` when no server was asked (the token URI, a `data:` URI,
 * a URL the policy refused).
 */
export type DocumentReach = 'none' | 'answered' | 'unreachable';

/** Why a fetch failed; `retryable` says whether trying later may succeed (network, 5xx, timeouts). */
export class MetadataFetchError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly reach: DocumentReach = 'none',
  ) {
    super(message);
    this.name = 'MetadataFetchError';
  }
}

/**
 * The largest JSON-RPC answer read for one `tokenURI`/`uri` call. A token URI that is a `data:`
 * document of at most `metadataMaxBytes` is at most three times as long (percent-encoded), and
 * the answer carries it hex-encoded (twice again) in an ABI envelope: anything longer cannot
 * yield a document the fetcher would keep. Bounded well below viem's own 10 MiB, which would
 * otherwise be read (and held) in full.
 */
export function tokenUriAnswerMaxBytes(metadataMaxBytes: number): number {
  return Math.min(6 * metadataMaxBytes + 16 * 1024, 4 * 1024 * 1024);
}

/** ERC-1155: every `{id}` in the URI becomes the id as 64 lowercase hex digits, no 0x prefix. */
export function substituteErc1155Id(uriTemplate: string, blockchainTokenId: string): string {
  const hex = BigInt(blockchainTokenId).toString(16).padStart(64, '0');
  return uriTemplate.split('{id}').join(hex);
}

export type MetadataLocation = { kind: 'data'; text: string } | { kind: 'http'; url: string; viaGateway: boolean };

/**
 * The IPFS gateway as the fetcher trusts it: its origin, and the path every fetch stays under
 * (`/ipfs/` of `https://ipfs.io/ipfs/`), the trusted prefix of the bounded fetch.
 */
export type IpfsGateway = TrustedPrefix;

export function ipfsGateway(gatewayUrl: string): IpfsGateway {
  const url = new URL(gatewayUrl);
  return { origin: url.origin, path: url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/` };
}

/** Whether a URL is under the gateway: its origin, and a path below the gateway's own. */
export const isUnderGateway: (url: URL, gateway: IpfsGateway) => boolean = isUnderPrefix;

/**
 * Where the metadata document of a token URI is: decoded in place for `data:`, an http(s) URL
 * otherwise (`ipfs://<cid>/<path>`, and the older `ipfs://ipfs/<cid>`, through the gateway).
 * Throws a non-retryable MetadataFetchError for an empty URI, an ipfs URI that is not accepted,
 * or any other scheme.
 */
export function locateMetadata(tokenUri: string, ipfsGatewayUrl: string): MetadataLocation {
  const uri = tokenUri.trim();
  if (uri === '') throw new MetadataFetchError('the contract returned an empty token URI', false);
  if (/^data:/i.test(uri)) return { kind: 'data', text: decodeDataUri(uri) };
  if (/^ipfs:/i.test(uri)) return { kind: 'http', url: ipfsGatewayUrlFor(uri, ipfsGateway(ipfsGatewayUrl)).toString(), viaGateway: true };
  if (/^https?:\/\//i.test(uri)) return { kind: 'http', url: uri, viaGateway: false };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1];
  throw new MetadataFetchError(
    scheme ? `unsupported token URI scheme "${scheme.toLowerCase()}:"` : 'the token URI is not an absolute URI',
    false,
  );
}

/** CIDv0: `Qm` and 44 base58btc characters (a sha2-256 multihash). */
const CID_V0 = /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/;
/** CIDv1 in the two multibase encodings gateways take in a path: base32 (`b`) and base36 (`k`), lowercase. */
const CID_V1 = /^(?:b[a-z2-7]{20,}|k[0-9a-z]{20,})$/;
/** A CID longer than this embeds its content (an identity hash) and has no business in a token URI. */
const CID_MAX_LENGTH = 256;
/** Percent-decoding is repeated this many times, so that no gateway decoding once more finds a dot-dot. */
const DECODE_ROUNDS = 3;

const notAccepted = (reason: string) => new MetadataFetchError(`the ipfs URI is not accepted: ${reason}`, false);

/**
 * The gateway URL of an `ipfs://` token URI (docs/CHAIN.md "Following a chain"). Only
 * `ipfs://<CID>[/<path>]` (or the older `ipfs://ipfs/<CID>[/<path>]`) is accepted: a CIDv0 or a
 * CIDv1, then path segments that are never `.` or `..`, raw or percent-encoded in any case, and
 * no `?`, `#`, backslash or encoded `/` or `\`. The URL is the gateway URL followed by the CID and
 * the path, and its path (as the URL parser leaves it, not as the string reads) must start with
 * the gateway's own: anything else is refused before any request is made.
 */
export function ipfsGatewayUrlFor(tokenUri: string, gateway: IpfsGateway): URL {
  const match = /^ipfs:\/\/(.*)$/is.exec(tokenUri);
  if (!match) throw notAccepted('it must be ipfs://<CID>[/<path>]');
  let rest = match[1];
  // eslint-disable-next-line no-control-regex -- control characters are what is refused here
  if (/[?#\\\u0000-\u001f\u007f]/.test(rest)) throw notAccepted('it may not contain "?", "#", a backslash or a control character');
  if (/%(2f|5c)/i.test(rest)) throw notAccepted('it may not contain an encoded "/" or "\\"');
  if (/^ipfs\//i.test(rest)) rest = rest.slice('ipfs/'.length);
  const [cid, ...segments] = rest.split('/');
  if (cid.length > CID_MAX_LENGTH || !(CID_V0.test(cid) || CID_V1.test(cid))) {
    throw notAccepted('its CID must be a CIDv0 (Qm...) or a CIDv1 in base32 (b...) or base36 (k...)');
  }
  segments.forEach((segment, index) => {
    // A trailing slash (a directory) is harmless; an empty segment inside the path is not a name.
    if (segment === '' && index < segments.length - 1) throw notAccepted('its path may not contain an empty segment');
    checkSegment(segment);
  });
  const url = new URL(gateway.origin);
  url.pathname = `${gateway.path}${[cid, ...segments].join('/')}`;
  const prefix = `${gateway.path}${cid}`;
  const staysUnder = url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);
  if (url.origin !== gateway.origin || !staysUnder || url.search !== '' || url.hash !== '' || !isUnderGateway(url, gateway)) {
    throw notAccepted('it leads out of the gateway path');
  }
  return url;
}

function checkSegment(segment: string): void {
  let decoded = segment;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    if (decoded === '.' || decoded === '..') throw notAccepted('its path may not contain "." or ".." segments, raw or percent-encoded');
    // eslint-disable-next-line no-control-regex -- control characters are what is refused here
    if (/[/\\?#\u0000-\u001f\u007f]/.test(decoded)) throw notAccepted('its path may not encode "/", "\\", "?", "#" or a control character');
    if (!decoded.includes('%')) return;
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      throw notAccepted('its path has malformed percent-encoding');
    }
  }
  throw notAccepted('its path is percent-encoded too many times');
}

/**
 * The text of a `data:` URI: `data:[<media type>][;params][;base64],<data>`, base64 or
 * percent-encoded. Only JSON (or an unspecified/plain text type) is accepted, as UTF-8.
 */
export function decodeDataUri(uri: string): string {
  const comma = uri.indexOf(',');
  if (comma < 0) throw new MetadataFetchError('malformed data: URI (no comma)', false);
  const header = uri.slice('data:'.length, comma).trim();
  const payload = uri.slice(comma + 1);
  const parts = header.split(';').map((p) => p.trim());
  const mediaType = (parts[0] ?? '').toLowerCase();
  const base64 = parts.slice(1).some((p) => p.toLowerCase() === 'base64');
  if (mediaType !== '' && mediaType !== 'application/json' && mediaType !== 'text/plain' && !mediaType.endsWith('+json')) {
    throw new MetadataFetchError(`data: URI of type ${mediaType} is not a JSON document`, false);
  }
  if (base64) {
    const compact = payload.replace(/\s+/g, '');
    // Buffer.from ignores what is not base64; a strict check gives the integrator a clear error.
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) throw new MetadataFetchError('malformed base64 in data: URI', false);
    return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64').toString('utf8');
  }
  try {
    return decodeURIComponent(payload);
  } catch {
    throw new MetadataFetchError('malformed percent-encoding in data: URI', false);
  }
}

/** The token fields a metadata document fills; the others stay null. */
export const FETCHED_METADATA_FIELDS = ['name', 'description', 'image', 'animationUrl', 'externalUrl', 'backgroundColor'] as const;
export type FetchedMetadata = { [K in (typeof FETCHED_METADATA_FIELDS)[number]]: string | null };

/**
 * Maps a metadata document (the ERC-721 / ERC-1155 metadata JSON, OpenSea's extensions) to the
 * token's fields: name, description, image, animation_url, external_url, background_color. A
 * field that is absent or not a string is null; text longer than the API allows is cut to it;
 * a link that the API would refuse (javascript:, relative, too long), or a `data:` link that is
 * not an `image/*` (text/html, scripts), is null rather than stored.
 */
export function mapMetadataDocument(text: string): FetchedMetadata {
  let document: unknown;
  try {
    document = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw new MetadataFetchError('the metadata is not valid JSON', false);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new MetadataFetchError('the metadata is not a JSON object', false);
  }
  const doc = document as Record<string, unknown>;
  const plain = (key: string): string | null => {
    const value = doc[key];
    if (typeof value !== 'string' || value.length === 0) return null;
    return value.length > METADATA_TEXT_MAX_LENGTH ? value.slice(0, METADATA_TEXT_MAX_LENGTH) : value;
  };
  const link = (key: string): string | null => {
    const value = doc[key];
    return typeof value === 'string' && isShowableMetadataLink(value.trim()) ? value.trim() : null;
  };
  const color = plain('background_color');
  return {
    name: plain('name'),
    description: plain('description'),
    image: link('image') ?? link('image_url'),
    animationUrl: link('animation_url'),
    externalUrl: link('external_url'),
    // OpenSea defines six hex digits without '#'; a leading '#' is common and harmless to drop.
    backgroundColor: color === null ? null : color.replace(/^#/, ''),
  };
}

/**
 * Delay before the n-th retry (n = failed attempts so far, from 1). After the last one the token
 * is `failed` for good (a refresh starts again). The first retries are quick because the most
 * common failure is a metadata server that lags the mint by seconds.
 */
export const METADATA_RETRY_DELAYS_MS: readonly number[] = [2_000, 10_000, 60_000, 300_000, 1_800_000];

/** When to try again after `attempts` failures, or null when the token should be `failed` now. */
export function nextMetadataAttempt(attempts: number, retryable: boolean, now: Date): Date | null {
  if (!retryable || attempts < 1 || attempts > METADATA_RETRY_DELAYS_MS.length) return null;
  return new Date(now.getTime() + METADATA_RETRY_DELAYS_MS[attempts - 1]);
}

/** Classifies an HTTP status of a metadata server. */
export function httpStatusError(status: number): MetadataFetchError {
  // 404 is common right after a mint, before the collection's server publishes the token.
  const retryable = status >= 500 || status === 404 || status === 408 || status === 429;
  return new MetadataFetchError(`the metadata server answered ${status}`, retryable, 'answered');
}

/** An error message stored on the token: one line, bounded. */
export function metadataErrorText(message: string): string {
  const line = message.split('\n')[0].trim();
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}
