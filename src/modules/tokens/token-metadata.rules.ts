import { ValidateBy, ValidationOptions } from 'class-validator';

export const METADATA_TEXT_MAX_LENGTH = 2048;

/** Integers travel as JSON numbers, so the safe-integer range keeps them exact in every client. */
export const METADATA_INTEGER_MAX = Number.MAX_SAFE_INTEGER;

export const METADATA_FIELDS = [
  'name',
  'description',
  'image',
  'animationUrl',
  'externalUrl',
  'backgroundColor',
  'editionId',
  'totalEdition',
  'creatorName',
  'creatorImageUrl',
  'creatorExternalPageUrl',
] as const;
export type MetadataField = (typeof METADATA_FIELDS)[number];

export const METADATA_INTEGER_FIELDS = ['editionId', 'totalEdition'] as const;
type IntegerField = (typeof METADATA_INTEGER_FIELDS)[number];

/** A token's metadata: every field present, null when unset. */
export type TokenMetadata = { [K in MetadataField]: K extends IntegerField ? number | null : string | null };

/** What a request may send: any subset; null means "unset" (clears on PATCH). */
export type TokenMetadataInput = Partial<TokenMetadata>;

export function emptyMetadata(): TokenMetadata {
  return Object.fromEntries(METADATA_FIELDS.map((field) => [field, null])) as TokenMetadata;
}

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const HAS_WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;
const CONTENT_ADDRESSED = /^(ipfs|ar):\/\/[^/?#]+/i;
// data:[<mediatype>][;param=value]*[;base64],<data>
const DATA_URI = /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?(;[a-z0-9!#$&^_.+-]+=[^;,]+)*(;base64)?,/i;

/**
 * Metadata links are shown to end users, often as <img src> or links, so only schemes that name
 * content are accepted: http(s) with a host, ipfs:// and ar:// with a content id, and data: URIs.
 * Anything else (javascript:, file:, relative paths) is refused.
 */
export function isMetadataUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > METADATA_TEXT_MAX_LENGTH) return false;
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (/^data:/i.test(value)) return DATA_URI.test(value) && !/[\u0000-\u001f\u007f]/.test(value);
  if (HAS_WHITESPACE_OR_CONTROL.test(value)) return false;
  if (CONTENT_ADDRESSED.test(value)) return true;
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/**
 * The media type of a `data:` URI, lowercase, as its header names it; `text/plain` when it names
 * none (RFC 2397); null when the value is not a well-formed `data:` URI.
 */
export function dataUriMediaType(value: string): string | null {
  const match = DATA_URI.exec(value);
  if (!match) return null;
  return (match[1] ?? 'text/plain').toLowerCase();
}

/**
 * Whether a fetched metadata link may be stored: a `data:` link is shown by wallets as an image
 * or opened as a page, so only an `image/*` one is kept (a `text/html` or script one would run
 * in the viewer's browser); every other link follows isMetadataUrl.
 */
export function isShowableMetadataLink(value: unknown): value is string {
  if (!isMetadataUrl(value)) return false;
  if (!/^data:/i.test(value)) return true;
  return dataUriMediaType(value)?.startsWith('image/') ?? false;
}

export function IsMetadataUrl(validationOptions?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isMetadataUrl',
      validator: {
        validate: (value) => isMetadataUrl(value),
        defaultMessage: () => 'must be an http(s), ipfs:// or ar:// URL, or a data: URI',
      },
    },
    validationOptions,
  );
}

/**
 * Applies a metadata patch: fields absent from the patch keep their value, null clears. Returns
 * the resulting metadata and, for the update event, `{field: newValue}` of the fields that changed.
 */
export function applyMetadataPatch(
  current: TokenMetadata,
  patch: TokenMetadataInput,
): { next: TokenMetadata; changes: Partial<TokenMetadata> } {
  const next = { ...current };
  const changes: Partial<TokenMetadata> = {};
  for (const field of METADATA_FIELDS) {
    const value = patch[field];
    if (value === undefined || value === current[field]) continue;
    (next as Record<string, unknown>)[field] = value;
    (changes as Record<string, unknown>)[field] = value;
  }
  return { next, changes };
}
