import { toChecksumAddress } from '../../common/evm-address';
import type { EndpointAuthSettings } from './endpoint-auth.rules';
import type { EndpointTlsSettings } from './endpoint-tls.rules';
import { DestinationCredentials, DestinationSettings, destinationView } from './destination.rules';
import { publicKeyLabel, SigningKeySlots } from './signing-keys.rules';
import { auditedSlots, SecretSlots } from './webhook-config.rules';
import { endpointSigningSlots, StoredEndpoint, WebhookEndpointState } from './webhook-endpoint.rules';

/*
 * How an endpoint reaches its receiver beyond its url (signing keys, OAuth2, mutual TLS, a
 * broker destination), and the endpoint as the audit log shows it.
 */

/** The transport settings of an endpoint, each secret standing for its sealed value. */
export interface TransportSlots {
  signing: SigningKeySlots;
  auth: EndpointAuthSettings | null;
  authClientSecret: string | null;
  tls: EndpointTlsSettings | null;
  tlsClientKey: string | null;
  /** The broker the endpoint publishes to, with its credentials opened (only masked ever leaves); null for HTTP. */
  destination: { settings: DestinationSettings; credentials: DestinationCredentials | null } | null;
  /** The destination's credentials, sealed. */
  destinationCredentials: string | null;
}

/** The transport of a stored endpoint; `credentials`: its destination's, opened by the caller (who holds the key). */
export function endpointTransport(row: StoredEndpoint, credentials: DestinationCredentials | null = null): TransportSlots {
  return {
    signing: endpointSigningSlots(row),
    auth: row.auth,
    authClientSecret: row.authClientSecretSealed,
    tls: row.tls,
    tlsClientKey: row.tlsClientKeySealed,
    destination: row.destination === null ? null : { settings: row.destination, credentials },
    destinationCredentials: row.destinationCredentialsSealed,
  };
}

/** The fields of auditedEndpoint's transport part that hold a secret (shown as "[redacted]"). */
export const TRANSPORT_SECRET_FIELDS = ['authClientSecret', 'tlsClientKey', 'destinationCredentials'] as const;

/**
 * The endpoint as its audit entries show it (pass SECRET_SLOT_FIELDS to diffForAudit): addresses
 * in EIP-55 form, secrets only as "[redacted]", the previous secret's expiry in the API's UTC format.
 */
export function auditedEndpoint(
  state: WebhookEndpointState,
  slots: SecretSlots,
  transport: TransportSlots | null = null,
): Record<string, unknown> {
  return {
    url: state.url,
    description: state.description,
    enabled: state.enabled,
    webhookTypes: state.webhookTypes,
    contractAddresses: state.contractAddresses === null ? null : state.contractAddresses.map(toChecksumAddress),
    // In name order: the same headers compare the same however they were listed (or stored).
    // None reads as null, so endpoints without headers are audited as before there were any.
    headers:
      Object.keys(state.headers).length === 0
        ? null
        : Object.fromEntries(Object.entries(state.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    rateLimitPerSecond: state.rateLimitPerSecond,
    maxInFlight: state.maxInFlight,
    ordering: state.ordering,
    payload: state.payload,
    filter: state.filter,
    retrySchedule: state.retrySchedule,
    disabledReason: state.disabledReason,
    ...auditedSlots(slots),
    // Public keys only: the private halves never reach the audit log, not even redacted.
    ...(transport === null
      ? {}
      : {
          publicKey: publicKeyLabel(transport.signing.publicKey),
          previousPublicKey: publicKeyLabel(transport.signing.previousPublicKey),
          auth: transport.auth,
          authClientSecret: transport.authClientSecret,
          // The certificate as its subject and expiry: the PEM text itself would swamp the entry.
          tls: transport.tls === null ? null : { subject: transport.tls.subject, notAfter: transport.tls.notAfter },
          tlsClientKey: transport.tlsClientKey,
          // The url masked exactly as the API shows it; the credentials only as "[redacted]" when they change.
          destination:
            transport.destination === null ? null : destinationView(transport.destination.settings, transport.destination.credentials),
          destinationCredentials: transport.destinationCredentials,
        }),
  };
}
