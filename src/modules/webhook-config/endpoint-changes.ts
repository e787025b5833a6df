// What every change of an endpoint checks, and how it writes the row's secret slots.
import { DomainError, notFound } from '../../common/errors/domain-error';
import type { SigningKeySlots } from './signing-keys.rules';
import type { SecretSlots } from './webhook-config.rules';
import type { WebhookEndpoint } from './webhook-endpoint.entity';
import { missingForEnabled, TransportSlots } from './webhook-endpoint.rules';
import type { WebhookEndpointInput } from './endpoint-inputs';

export function endpointNotFound(endpointId: string): DomainError {
  return notFound('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${endpointId} does not exist.`);
}

export function organizationNotFound(organizationId: string): DomainError {
  return notFound('ORGANIZATION_NOT_FOUND', `Organization ${organizationId} does not exist.`);
}

/** An enabled endpoint must be able to sign and send (only the default one can be otherwise, while disabled). */
export function assertComplete(state: { enabled: boolean; url: string | null }, slots: SecretSlots): void {
  const missing = missingForEnabled(state, slots.sharedSecret);
  if (missing.length === 0) return;
  throw new DomainError(
    422,
    'WEBHOOK_CONFIG_INCOMPLETE',
    `An enabled webhook configuration needs ${missing.join(' and ')}; set ${missing.length > 1 ? 'them' : 'it'} or keep it disabled.`,
    missing.map((field) => ({ field, message: 'is required while the configuration is enabled' })),
  );
}

/** The default endpoint is the webhook configuration: it has no description and no filter. */
export function assertDefaultEndpointFields(input: WebhookEndpointInput): void {
  const refused = (['description', 'filters'] as const).filter((field) => input[field] !== undefined);
  if (refused.length === 0) return;
  throw new DomainError(
    422,
    'DEFAULT_ENDPOINT',
    `The default endpoint is the webhook configuration, which has no ${refused.join(' and ')}; ` +
      'add another endpoint for a description or filters.',
    refused.map((field) => ({ field, message: 'is not available on the default endpoint' })),
  );
}

export function assignTransport(row: WebhookEndpoint, transport: TransportSlots): void {
  const slots: SigningKeySlots = transport.signing;
  row.signingPrivateKeySealed = slots.privateKey;
  row.signingPublicKey = slots.publicKey;
  row.previousSigningPrivateKeySealed = slots.previousPrivateKey;
  row.previousSigningPublicKey = slots.previousPublicKey;
  row.auth = transport.auth;
  row.authClientSecretSealed = transport.authClientSecret;
  row.tls = transport.tls;
  row.tlsClientKeySealed = transport.tlsClientKey;
}

export function assignSlots(row: WebhookEndpoint, slots: SecretSlots): void {
  row.sharedSecretSealed = slots.sharedSecret;
  row.previousSharedSecretSealed = slots.previousSharedSecret;
  row.previousSecretExpiresAt = slots.previousSecretExpiresAt;
}
