import { createHash } from 'node:crypto';

/** One endpoint's OAuth2 client (client credentials grant), its secret already opened. */
export interface OAuth2Client {
  endpointId: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | null;
}

/** What a token endpoint granted. */
export interface GrantedToken {
  accessToken: string;
  /** `expires_in` in seconds; null when the token endpoint did not say. */
  expiresInSeconds: number | null;
}

/** A token is no longer used this long before it expires, so it never expires in flight. */
export const TOKEN_EXPIRY_MARGIN_MS = 30_000;
/** How long a token without `expires_in` is used (RFC 6749 leaves its lifetime to the server). */
export const TOKEN_DEFAULT_LIFETIME_MS = 300_000;

/** Until when a token granted at `nowMs` is used: 30 s before it expires (at once when it lives shorter). */
export function tokenUsableUntil(expiresInSeconds: number | null, nowMs: number): number {
  const lifetimeMs = expiresInSeconds === null ? TOKEN_DEFAULT_LIFETIME_MS : expiresInSeconds * 1000;
  return nowMs + Math.max(0, lifetimeMs - TOKEN_EXPIRY_MARGIN_MS);
}

/**
 * `client_secret_basic` (RFC 6749 section 2.3.1): the client id and secret, each
 * form-urlencoded, joined by a colon, in Base64.
 */
export function basicClientAuthorization(clientId: string, clientSecret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`, 'utf8').toString('base64')}`;
}

/** The form body of a client credentials token request. */
export function tokenRequestBody(scope: string | null): string {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope !== null) form.set('scope', scope);
  return form.toString();
}

/**
 * The longest token answer read. A grant is a few hundred bytes (a JWT a few KiB); a token
 * endpoint answering more is broken or hostile, and reading it whole would hold it in memory.
 */
export const TOKEN_RESPONSE_MAX_BYTES = 16 * 1024;

/** Why a token could not be obtained, in words fit for a delivery log (never the secret or a token). */
export class TokenRequestError extends Error {
  constructor(
    message: string,
    /** True when the URL policy refused the token endpoint. */
    readonly blocked = false,
  ) {
    super(message);
    this.name = 'TokenRequestError';
  }
}

/**
 * A token answer's body as text, read only up to `maxBytes`: a longer one (by its Content-Length
 * or by what arrives) fails the token request at once, and the rest is never read.
 */
export async function readTokenAnswer(
  body: AsyncIterable<Uint8Array>,
  contentLength: number | null,
  maxBytes = TOKEN_RESPONSE_MAX_BYTES,
): Promise<string> {
  const tooLong = () => new TokenRequestError(`the token endpoint answered more than ${maxBytes / 1024} KiB`);
  if (contentLength !== null && contentLength > maxBytes) throw tooLong();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    // Leaving the loop ends the stream (and drops its connection).
    if (length > maxBytes) throw tooLong();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length).toString('utf8');
}

/**
 * Reads a token endpoint's answer (RFC 6749 section 5.1/5.2). A refusal names its `error` code
 * only: descriptions are the server's free text and are not repeated into the delivery log.
 */
export function parseTokenResponse(status: number, text: string): GrantedToken {
  let json: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = null;
  }
  if (status < 200 || status > 299) {
    const code = json && typeof json.error === 'string' && /^[\x20-\x7e]{1,64}$/.test(json.error) ? ` (${json.error})` : '';
    throw new TokenRequestError(`the token endpoint answered ${status}${code}`);
  }
  if (json === null || typeof json.access_token !== 'string' || json.access_token.length === 0) {
    throw new TokenRequestError('the token endpoint answered without an access_token');
  }
  const tokenType = typeof json.token_type === 'string' ? json.token_type.toLowerCase() : 'bearer';
  if (tokenType !== 'bearer') throw new TokenRequestError(`the token endpoint issued a ${tokenType} token, not a bearer token`);
  const expiresIn =
    typeof json.expires_in === 'number' ? json.expires_in : typeof json.expires_in === 'string' ? Number(json.expires_in) : NaN;
  return { accessToken: json.access_token, expiresInSeconds: Number.isFinite(expiresIn) && expiresIn >= 0 ? expiresIn : null };
}

interface CachedToken {
  accessToken: string;
  usableUntilMs: number;
}

/**
 * The tokens of every endpoint with OAuth2 client credentials, cached until 30 s before they
 * expire. At most one token request per endpoint is in flight: concurrent attempts wait for it.
 * Keyed by the endpoint and a digest of its client settings, so a changed secret or scope gets a
 * new token at once. Tokens live only in memory.
 */
export class OAuth2TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(
    private readonly request: (client: OAuth2Client) => Promise<GrantedToken>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token for `client`: the cached one while usable, else a new one (shared by concurrent callers). */
  token(client: OAuth2Client): Promise<string> {
    const key = cacheKey(client);
    const cached = this.tokens.get(key);
    if (cached && this.now() < cached.usableUntilMs) return Promise.resolve(cached.accessToken);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const fresh = this.request(client)
      .then((granted) => {
        this.dropEndpoint(client.endpointId);
        this.tokens.set(key, { accessToken: granted.accessToken, usableUntilMs: tokenUsableUntil(granted.expiresInSeconds, this.now()) });
        return granted.accessToken;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, fresh);
    return fresh;
  }

  /** Forgets `token` (the receiver refused it), unless a newer one already replaced it. */
  invalidate(client: OAuth2Client, token: string): void {
    const key = cacheKey(client);
    if (this.tokens.get(key)?.accessToken === token) this.tokens.delete(key);
  }

  /** An endpoint's tokens under older settings are of no more use. */
  private dropEndpoint(endpointId: string): void {
    for (const key of this.tokens.keys()) if (key.startsWith(`${endpointId}:`)) this.tokens.delete(key);
  }
}

function cacheKey(client: OAuth2Client): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([client.tokenUrl, client.clientId, client.clientSecret, client.scope]))
    .digest('base64url');
  return `${client.endpointId}:${digest}`;
}
