import type { Attributes } from '@opentelemetry/api';
import { redactUrl } from '../http/redact-url';

/** Span attributes that hold a URL or a part of one, in the current and the older semantic conventions. */
const URL_ATTRIBUTES: readonly string[] = ['url.full', 'url.path', 'url.query', 'http.target', 'http.url'];

/**
 * A span's attributes with every URL in them redacted as the request logs redact it (see
 * redactUrl: key-shaped values and the operator key in any query parameter or path segment,
 * credential-like query parameters); null when there is nothing to hide, so the span is exported
 * as it is.
 */
export function redactUrlAttributes(attributes: Attributes, operatorKey: string | null): Attributes | null {
  let redacted: Attributes | null = null;
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value !== 'string') continue;
    // A query alone is read as the query of a URL.
    const safe = key === 'url.query' ? redactUrl(`?${value}`, operatorKey).slice(1) : redactUrl(value, operatorKey);
    if (safe !== value) (redacted ??= { ...attributes })[key] = safe;
  }
  return redacted;
}
