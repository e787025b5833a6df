import { isMetadataUrl, METADATA_TEXT_MAX_LENGTH } from '../../tokens/token-metadata.rules';

/**
 * Pure rules of fetching a chain token's metadata (README.md "Following a chain"): where the
 * token URI points, how a `data:` URI decodes, how the JSON document maps to the token's fields,
 * and when a failed fetch is tried again.
 */

/** Why a fetch failed; `retryable` says whether trying later may succeed (network, 5xx, timeouts). */
export class MetadataFetchError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'MetadataFetchError';
  }
}

/** ERC-1155: every `{id}` in the URI becomes the id as 64 lowercase hex digits, no 0x prefix. */
export function substituteErc1155Id(uriTemplate: string, blockchainTokenId: string): string {
  const hex = BigInt(blockchainTokenId).toString(16).padStart(64, '0');
  return uriTemplate.split('{id}').join(hex);
}

export type MetadataLocation = { kind: 'data'; text: string } | { kind: 'http'; url: string; viaGateway: boolean };

/**
 * Where the metadata document of a token URI is: decoded in place for `data:`, an http(s) URL
 * otherwise (`ipfs://<cid>/<path>`, and the older `ipfs://ipfs/<cid>`, through the gateway).
 * Throws a non-retryable MetadataFetchError for an empty URI or any other scheme.
 */
export function locateMetadata(tokenUri: string, ipfsGatewayUrl: string): MetadataLocation {
  const uri = tokenUri.trim();
  if (uri === '') throw new MetadataFetchError('the contract returned an empty token URI', false);
  if (/^data:/i.test(uri)) return { kind: 'data', text: decodeDataUri(uri) };
  const ipfs = /^ipfs:\/\/(?:ipfs\/)?(.+)$/i.exec(uri);
  if (ipfs) {
    const gateway = ipfsGatewayUrl.endsWith('/') ? ipfsGatewayUrl : `${ipfsGatewayUrl}/`;
    return { kind: 'http', url: `${gateway}${ipfs[1]}`, viaGateway: true };
  }
  if (/^https?:\/\//i.test(uri)) return { kind: 'http', url: uri, viaGateway: false };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1];
  throw new MetadataFetchError(
    scheme ? `unsupported token URI scheme "${scheme.toLowerCase()}:"` : 'the token URI is not an absolute URI',
    false,
  );
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
 * a link that the API would refuse (javascript:, relative, too long) is null rather than stored.
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
    return typeof value === 'string' && isMetadataUrl(value.trim()) ? value.trim() : null;
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
  return new MetadataFetchError(`the metadata server answered ${status}`, retryable);
}

/** An error message stored on the token: one line, bounded. */
export function metadataErrorText(message: string): string {
  const line = message.split('\n')[0].trim();
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}
