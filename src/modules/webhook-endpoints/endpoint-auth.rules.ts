/**
 * OAuth2 client credentials towards a receiver (RFC 6749 section 4.4): the service asks
 * `tokenUrl` for a token with HTTP Basic client authentication and sends it as a bearer token.
 * These are the parts that are not secret (stored in clear, shown on GET); the client secret is
 * sealed apart and never leaves the service.
 */
export const OAUTH2_CLIENT_CREDENTIALS = 'oauth2ClientCredentials';
export const AUTH_TYPES = [OAUTH2_CLIENT_CREDENTIALS] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

export interface EndpointAuthSettings {
  type: AuthType;
  tokenUrl: string;
  clientId: string;
  /** Space-separated scopes to ask for; null asks for the client's default. */
  scope: string | null;
}

/** How the API and the audit log show an endpoint's auth: never the secret, only that it is set. */
export interface EndpointAuthView extends EndpointAuthSettings {
  hasClientSecret: boolean;
}

export function endpointAuthView(settings: EndpointAuthSettings | null, clientSecretSealed: string | null): EndpointAuthView | null {
  if (settings === null) return null;
  return {
    type: settings.type,
    tokenUrl: settings.tokenUrl,
    clientId: settings.clientId,
    scope: settings.scope,
    hasClientSecret: clientSecretSealed !== null,
  };
}
