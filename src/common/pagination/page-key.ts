import { badRequest } from '../errors/domain-error';

/**
 * Page keys are opaque to clients: base64url of a small JSON array holding the sort key of the
 * last item served. Keyset pagination on that key never skips or repeats rows while data changes.
 */
export function encodePageKey(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
}

export function decodePageKey(pageKey: string, shape: readonly ('string' | 'uuid' | 'number')[]): (string | number)[] {
  const invalid = () => badRequest('INVALID_PAGE_KEY', 'pageKey is not a key returned by this endpoint.');
  if (pageKey.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(pageKey)) throw invalid();
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(pageKey, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(values) || values.length !== shape.length) throw invalid();
  shape.forEach((kind, i) => {
    const value: unknown = values[i];
    const ok =
      kind === 'number'
        ? typeof value === 'number' && Number.isFinite(value)
        : typeof value === 'string' && (kind === 'string' || UUID_PATTERN.test(value));
    if (!ok) throw invalid();
  });
  return values as (string | number)[];
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
