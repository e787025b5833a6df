import { FieldError, validationFailed } from '../../common/errors/domain-error';

/** The bounds of an endpoint's `rateLimitPerSecond` (null: unlimited). */
export const MIN_RATE_LIMIT_PER_SECOND = 1;
export const MAX_RATE_LIMIT_PER_SECOND = 10_000;

/** The bounds of an endpoint's `maxInFlight` (null: the service's WEBHOOK_PER_RECEIVER_CONCURRENCY). */
export const MIN_MAX_IN_FLIGHT = 1;
export const MAX_MAX_IN_FLIGHT = 1000;

/** Custom headers one endpoint may have. */
export const MAX_CUSTOM_HEADERS = 10;
/** The longest value of a custom header. */
export const MAX_CUSTOM_HEADER_VALUE_LENGTH = 1024;

/**
 * Credentials a custom header may not carry: authentication to an endpoint goes through its
 * `auth` (whose token would otherwise go out beside a second Authorization header), and proxy
 * credentials belong to the deployment's proxy, not to an endpoint.
 */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization'];

/**
 * Headers a custom header may not set, lowercase: the ones every webhook carries (its signatures,
 * ids, timestamp, content type and user agent; receivers rely on them being the service's own),
 * the host, the credentials (CREDENTIAL_HEADERS), and the ones that frame or route the request
 * rather than describe it (setting them would break the request or be refused by the HTTP client).
 */
export const RESERVED_HEADERS: readonly string[] = [
  ...CREDENTIAL_HEADERS,
  'content-type',
  'host',
  'user-agent',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
  'traceparent',
  'tracestate',
];

/**
 * Header name prefixes of the webhook's own headers (x-service-webhook-hmac, -id, -event-id,
 * -attempt…; Standard Webhooks' webhook-id, webhook-timestamp, webhook-signature): refused as a
 * family, so a header the service adds later can never be shadowed by one an endpoint set first.
 */
export const RESERVED_HEADER_PREFIXES: readonly string[] = ['x-service-webhook-', 'webhook-'];

/** An HTTP token (RFC 9110, section 5.6.2): the characters a header name may have. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII and spaces: no control characters, so never a CR or LF that could start another header. */
const VALUE = /^[\x20-\x7E]*$/;

/** Whether the service sets this header itself (or it frames the request), so an endpoint cannot. */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.includes(lower) || RESERVED_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/**
 * The custom headers of a request, checked: an object of at most 10 `name: value` pairs, each
 * name an HTTP token set by the service nowhere and given once (names compare case-insensitively),
 * each value a string of at most 1,024 visible ASCII characters and spaces. Null means none (`{}`).
 * Every problem is named (`headers.X-Name`) in one 400. Names keep the case they were given.
 */
export function parseCustomHeaders(input: unknown): Record<string, string> {
  if (input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw validationFailed([{ field: 'headers', message: 'must be an object of header names to values' }]);
  }
  const entries = Object.entries(input as Record<string, unknown>);
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const field = `headers.${name}`;
    if (!TOKEN.test(name)) {
      errors.push({ field, message: "the header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)" });
    } else if (CREDENTIAL_HEADERS.includes(name.toLowerCase())) {
      errors.push({ field, message: `${name} cannot be a custom header: authentication to an endpoint goes through auth` });
    } else if (isReservedHeader(name)) {
      errors.push({ field, message: `${name} is set by the service and cannot be a custom header` });
    } else if (seen.has(name.toLowerCase())) {
      errors.push({ field, message: 'the header is given twice (names are case-insensitive)' });
    }
    seen.add(name.toLowerCase());
    if (typeof value !== 'string') {
      errors.push({ field, message: 'the value must be a string' });
    } else if (value.length > MAX_CUSTOM_HEADER_VALUE_LENGTH) {
      errors.push({ field, message: `the value must be at most ${MAX_CUSTOM_HEADER_VALUE_LENGTH} characters` });
    } else if (!VALUE.test(value)) {
      errors.push({
        field,
        message: 'the value may hold only visible ASCII characters and spaces (no CR, LF or other control characters)',
      });
    }
  }
  // After the headers' own problems, so the answer's detail names a header when one is wrong.
  if (entries.length > MAX_CUSTOM_HEADERS) {
    errors.push({ field: 'headers', message: `must have at most ${MAX_CUSTOM_HEADERS} headers` });
  }
  if (errors.length > 0) throw validationFailed(errors);
  return Object.fromEntries(entries) as Record<string, string>;
}
