import { openSecret, sealSecret } from '../../common/crypto/secret-box';
import { checkDestinationHost, destinationPolicyOf } from '../../common/net/destination-policy';
import { validationFailed } from '../../common/errors/domain-error';
import { checkWebhookUrl, resolveWebhookHost, urlPolicyOf, WebhookHostError, webhookUrlHostname } from '../../common/net/url-policy';
import type { AppConfig } from '../../config/app-config';
import {
  DestinationCredentials,
  destinationHostPort,
  MASKED_PASSWORD,
  ParsedDestination,
  parseDestinationInput,
} from './destination.rules';
import { EndpointAuthSettings, OAUTH2_CLIENT_CREDENTIALS } from './endpoint-auth.rules';
import type { WebhookEndpointInput } from './endpoint-change';
import { EndpointTlsSettings, parseTlsInput } from './endpoint-tls.rules';
import { generateSigningKeyPair } from './signing-keys.rules';

/**
 * What an endpoint request brings that needs the deployment's settings before any row is
 * locked: URLs held to the webhook URL policy (a hostname lookup may take a while), and secrets,
 * client keys and new key pairs sealed with the organization's id as context.
 */
export class EndpointInputs {
  constructor(private readonly config: AppConfig) {}

  /**
   * The deployment's URL policy for a webhook receiver (scheme, credentials, port, and what the
   * hostname resolves to): a 400 naming `url` when refused. Every endpoint is held to it.
   */
  async assertAcceptableUrl(url: string, field = 'url'): Promise<void> {
    const policy = urlPolicyOf(this.config);
    const reason = checkWebhookUrl(url, policy);
    if (reason !== null) throw validationFailed([{ field, message: `${field} ${reason}` }]);
    try {
      await resolveWebhookHost(webhookUrlHostname(url), policy);
    } catch (error) {
      if (error instanceof WebhookHostError) throw validationFailed([{ field, message: `${field} ${error.message}` }]);
      throw error;
    }
  }

  seal(organizationId: string, secret: string): string {
    return sealSecret(secret, this.config.secretsEncryptionKey, organizationId);
  }

  /**
   * The auth settings of a request, the token URL held to the webhook URL policy (a 400 naming
   * `auth.tokenUrl`) and the client secret sealed; null removes them.
   */
  async parseAuth(
    organizationId: string,
    input: WebhookEndpointInput['auth'],
  ): Promise<{ settings: EndpointAuthSettings; clientSecretSealed: string } | null> {
    if (input === undefined || input === null) return null;
    await this.assertAcceptableUrl(input.tokenUrl, 'auth.tokenUrl');
    return {
      settings: { type: OAUTH2_CLIENT_CREDENTIALS, tokenUrl: input.tokenUrl, clientId: input.clientId, scope: input.scope ?? null },
      clientSecretSealed: this.seal(organizationId, input.clientSecret),
    };
  }

  /** The tls settings of a request, checked (a 400 naming the field) and the key sealed; null removes them. */
  parseTls(organizationId: string, input: WebhookEndpointInput['tls']): { settings: EndpointTlsSettings; clientKeySealed: string } | null {
    if (input === undefined || input === null) return null;
    const parsed = parseTlsInput(input);
    return { settings: parsed.settings, clientKeySealed: this.seal(organizationId, parsed.clientKey) };
  }

  /** A new Ed25519 key pair, its private half sealed like a secret. */
  newKeyPair(organizationId: string): { privateKey: string; publicKey: string } {
    const pair = generateSigningKeyPair();
    return { privateKey: this.seal(organizationId, pair.privateKey), publicKey: pair.publicKey };
  }

  /**
   * A request's broker destination, checked field by field and its host held to the broker
   * address policy (a 400 naming `destination.url`). The broker itself is not contacted.
   */
  async parseDestination(input: unknown): Promise<ParsedDestination> {
    const parsed = parseDestinationInput(input);
    const { hostname, hostPort } = destinationHostPort(parsed.settings.url);
    try {
      await checkDestinationHost(hostname, hostPort, destinationPolicyOf(this.config));
    } catch (error) {
      if (error instanceof WebhookHostError) {
        throw validationFailed([{ field: 'destination.url', message: `destination.url ${error.message}` }]);
      }
      throw error;
    }
    return parsed;
  }

  /** A destination's credentials sealed as one JSON value; null when the url has none. */
  sealCredentials(organizationId: string, credentials: DestinationCredentials | null): string | null {
    return credentials === null ? null : this.seal(organizationId, JSON.stringify(credentials));
  }

  /**
   * Stored credentials opened, to show the user and keep a password a PATCH sends back as `***`.
   * A value that no longer opens shows as `***:***` (and keeps nothing).
   */
  openCredentials(organizationId: string, sealed: string | null): DestinationCredentials | null {
    if (sealed === null) return null;
    try {
      return JSON.parse(openSecret(sealed, this.config.secretsEncryptionKey, organizationId)) as DestinationCredentials;
    } catch {
      return { username: MASKED_PASSWORD, password: MASKED_PASSWORD };
    }
  }
}
