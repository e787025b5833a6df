/**
 * URL redaction shared by everything that writes a URL out of the process: the request logs
 * (src/logging.ts) and the exported traces (src/common/tracing/), so both hide the same values.
 */

/** Query parameters whose values are credentials when a client puts them in the URL by mistake. */
const SECRET_QUERY_PARAMETER = /^(api[-_]?key|key|token|access[-_]?token|secret|shared[-_]?secret|password|authorization)$/i;

/** A value shaped like an API key: the marker and 43 characters of base64url, anywhere in a string. */
const API_KEY_SHAPED = /nftw_[A-Za-z0-9_-]{43}/;

const decodeOrKeep = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    // an undecodable part is judged as sent
    return text;
  }
};

/**
 * A request URL as logged or traced. The service never reads credentials from the URL, but a
 * client that sends one there must not have it written to logs or traces: values of credential-like query
 * parameters, and any query parameter (name or value) or path segment holding something shaped
 * like an API key or equal to the operator key, whatever the parameter is called.
 */
export function redactUrl(url: string, operatorKey: string | null = null): string {
  const holdsSecret = (part: string) => {
    const decoded = decodeOrKeep(part);
    return API_KEY_SHAPED.test(decoded) || (operatorKey !== null && decoded.includes(operatorKey));
  };
  const queryAt = url.indexOf('?');
  const path = (queryAt < 0 ? url : url.slice(0, queryAt))
    .split('/')
    .map((segment) => (holdsSecret(segment) ? '[redacted]' : segment))
    .join('/');
  if (queryAt < 0) return path;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      const value = equals < 0 ? '' : pair.slice(equals + 1);
      if (holdsSecret(name)) return '[redacted]';
      const decodedName = decodeOrKeep(name);
      return SECRET_QUERY_PARAMETER.test(decodedName.replace(/\[.*$/, '')) || holdsSecret(value) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}
