import { ApiProperty } from '@nestjs/swagger';
import { toChecksumAddress } from '../../../common/evm-address';
import { formatUtc } from '../../../common/time';
import { WEBHOOK_TYPES, WebhookType } from '../../domain-events/domain-event.catalogue';
import { AUTH_TYPES } from '../endpoint-auth.rules';
import { PAYLOAD_KINDS, type PayloadKind } from '../receiver-choices.rules';
import { ENDPOINT_ORDERINGS, type EndpointOrdering, type WebhookEndpointView } from '../webhook-endpoint.rules';
import { pick } from '../../../common/pick';
import { destinationProperty, type DestinationDto } from './destination.dto';

export class WebhookEndpointFiltersDto {
  /** Contracts (EIP-55) whose `nft` and `transaction` webhooks this endpoint receives; null: every contract. */
  @ApiProperty({ type: [String], nullable: true, example: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'] })
  contractAddresses: string[] | null;
}

export class WebhookEndpointAuthDto {
  @ApiProperty({ enum: AUTH_TYPES, example: 'oauth2ClientCredentials' })
  type: string;

  /** Where the service gets its tokens. */
  @ApiProperty({ type: String, example: 'https://auth.example.com/oauth2/token' })
  tokenUrl: string;

  @ApiProperty({ type: String, example: 'nft-wallet-webhooks' })
  clientId: string;

  /** The scopes asked for; null for the client's default. */
  @ApiProperty({ type: String, nullable: true, example: 'webhooks:write' })
  scope: string | null;

  /** Whether a client secret is set. The secret itself, and every token, is never returned. */
  @ApiProperty({ type: Boolean })
  hasClientSecret: boolean;
}

export class WebhookEndpointTlsDto {
  /** Whether the client key is set. The key itself is never returned. */
  @ApiProperty({ type: Boolean })
  hasClientKey: boolean;

  /** The client certificate's subject. */
  @ApiProperty({ type: String, example: 'CN=nft-wallet-webhooks, O=Example' })
  subject: string;

  /** When the client certificate expires: renew it before then. */
  @ApiProperty({ type: String, example: '2027-11-26T00:00:00.000000+00:00' })
  notAfterUtc: string;
}

export class WebhookEndpointDto {
  /** The endpoint's id; the default endpoint's is the organization's id. */
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  /** True for the organization's default endpoint: the webhook configuration, which cannot be deleted. */
  @ApiProperty({ type: Boolean })
  isDefault: boolean;

  /** Where webhooks are sent; null for a broker endpoint (`destination`) and a default endpoint not configured yet. */
  @ApiProperty({ type: String, nullable: true, example: 'https://example.com/webhooks' })
  url: string | null;

  /** Free text; always null on the default endpoint. */
  @ApiProperty({ type: String, nullable: true, example: 'Data warehouse ingest' })
  description: string | null;

  /** Webhooks are sent only while enabled. */
  @ApiProperty({ type: Boolean })
  enabled: boolean;

  /** The webhook types received, in catalogue order. */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, example: ['transaction', 'nft'] })
  webhookTypes: WebhookType[];

  /** Which webhooks of those types it receives; the default endpoint has no filter. */
  @ApiProperty({ type: WebhookEndpointFiltersDto })
  filters: WebhookEndpointFiltersDto;

  /** Custom headers sent on every webhook to this endpoint; `{}` for none. */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'X-Gateway-Token': 'gw_4f1c9a', 'X-Tenant': 'acme' },
  })
  headers: Record<string, string>;

  /** At most this many attempts reach the endpoint in any fixed one-second window; null: unlimited. */
  @ApiProperty({ type: 'integer', nullable: true, minimum: 1, maximum: 10_000, example: null })
  rateLimitPerSecond: number | null;

  /**
   * The most attempts in flight at once to the endpoint, across every worker; the limit in force
   * adapts within it to the receiver's latency and answers. Null: the service's fixed
   * WEBHOOK_PER_RECEIVER_CONCURRENCY (10) per worker process. Each attempt in the delivery log
   * shows the limit it started under as `inFlightLimit`.
   */
  @ApiProperty({ type: 'integer', nullable: true, minimum: 1, maximum: 1000, example: null })
  maxInFlight: number | null;

  /**
   * `none`: each webhook is sent as soon as it can be. `resource`: the webhooks of one `resourceId`
   * are sent one at a time in event order (the next waits until the previous one succeeded or
   * failed), each with `x-service-webhook-sequence`.
   */
  @ApiProperty({
    enum: ENDPOINT_ORDERINGS,
    example: 'none',
    description:
      '`none`: each webhook is sent as soon as it can be. `resource`: the webhooks of one `resourceId` are sent one at a time ' +
      'in event order (the next waits until the previous one succeeded or ended failed), each carrying the header ' +
      '`x-service-webhook-sequence` (1, 2, 3… per endpoint and resourceId).',
  })
  ordering: EndpointOrdering;

  /** `thin`: the event's envelope; `full`: the envelope and `data`, the resource as its GET answers. */
  @ApiProperty({ enum: PAYLOAD_KINDS, example: 'thin' })
  payload: PayloadKind;

  /** The content filter every event must match to become a webhook here; null: none. */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: null })
  filter: Record<string, unknown> | null;

  /** This endpoint's retry delays in seconds; null: the service's schedule (WEBHOOK_RETRY_SCHEDULE). */
  @ApiProperty({ type: 'array', items: { type: 'integer' }, nullable: true, example: null })
  retrySchedule: number[] | null;

  /** Whether a shared secret is set. The secret itself is never returned. */
  @ApiProperty({ type: Boolean })
  hasSharedSecret: boolean;

  /** While a rotation's overlap lasts, when the replaced secret stops signing; null when no previous secret signs. */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-24T10:00:00.000000+00:00' })
  previousSecretExpiresAtUtc: string | null;

  /**
   * The endpoint's Ed25519 public key, `whpk_` + Base64 of its 32 raw bytes, when it signs
   * asymmetrically (`signing.asymmetric`); null otherwise. Receivers verify the `v1a,` entries of
   * `webhook-signature` with it.
   */
  @ApiProperty({ type: String, nullable: true, example: 'whpk_S+fndeuCOYPIqw35MzpFcCjpt2ysX4sqbtN0PdIObQ8=' })
  publicKey: string | null;

  /** While a rotation's overlap lasts, the replaced public key (its `v1a,` entry is still sent); null otherwise. */
  @ApiProperty({ type: String, nullable: true, example: null })
  previousPublicKey: string | null;

  /** OAuth2 client credentials the service uses towards this endpoint, without the secret; null when none. */
  @ApiProperty({ type: WebhookEndpointAuthDto, nullable: true })
  auth: WebhookEndpointAuthDto | null;

  /** Mutual TLS towards this endpoint: the client certificate's subject and expiry; null when none. */
  @ApiProperty({ type: WebhookEndpointTlsDto, nullable: true })
  tls: WebhookEndpointTlsDto | null;

  /** The message broker this endpoint publishes to (the url's password shown as `***`); null for an HTTP endpoint. */
  @ApiProperty({
    ...destinationProperty(
      'The message broker this endpoint publishes to, exactly the fields it was given with the url’s password as `***` ' +
        '(so it can be sent back); null for an HTTP endpoint.',
    ),
    required: true,
  })
  destination: DestinationDto | null;

  /**
   * Why the service switched the endpoint off; null otherwise. `failing`: every attempt failed for
   * WEBHOOK_AUTO_DISABLE_AFTER (default 5 days) with at least 10 failed webhooks (auto-disable,
   * audited with the system as actor). A PATCH of `enabled` clears it; the failed webhooks stay
   * replayable.
   */
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'Why the service switched the endpoint off, or null. `failing`: every attempt failed for WEBHOOK_AUTO_DISABLE_AFTER ' +
      '(default 5 days) with at least 10 failed webhooks; audited with the system as actor. A PATCH of `enabled` clears it; ' +
      'its failed webhooks stay replayable (POST …/webhooks/replay).',
  })
  disabledReason: string | null;

  /** When the endpoint was added; the organization's creation time for the default endpoint. */
  @ApiProperty({ type: String, example: '2026-11-22T01:25:42.123456+00:00' })
  createdAtUtc: string;

  /** Last change. */
  @ApiProperty({ type: String, example: '2026-11-22T01:25:42.123456+00:00' })
  updatedAtUtc: string;

  static from(view: WebhookEndpointView): WebhookEndpointDto {
    return {
      ...pick(view, 'id', 'isDefault', 'url', 'description', 'enabled'),
      webhookTypes: [...view.webhookTypes],
      filters: { contractAddresses: view.contractAddresses === null ? null : view.contractAddresses.map(toChecksumAddress) },
      headers: { ...view.headers },
      ...pick(view, 'rateLimitPerSecond', 'maxInFlight', 'ordering', 'payload', 'filter', 'retrySchedule', 'hasSharedSecret'),
      previousSecretExpiresAtUtc: formatUtc(view.previousSecretExpiresAt),
      ...pick(view, 'publicKey', 'previousPublicKey'),
      auth: view.auth === null ? null : { ...view.auth },
      tls:
        view.tls === null
          ? null
          : { hasClientKey: view.tls.hasClientKey, subject: view.tls.subject, notAfterUtc: formatUtc(view.tls.notAfter) },
      destination: view.destination === null ? null : { ...view.destination },
      disabledReason: view.disabledReason,
      createdAtUtc: formatUtc(view.createdAt),
      updatedAtUtc: formatUtc(view.updatedAt),
    };
  }
}

export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  /** The generated secret, shown only in this answer; absent when the request gave one. */
  @ApiProperty({ type: String, required: false, example: 'q0m5N1p8Hc3XoE7w2k3T9yJtC1dVq4fUeR6sZ8aB0gM' })
  sharedSecret?: string;

  static fromCreated(view: WebhookEndpointView, generatedSecret: string | undefined): CreatedWebhookEndpointDto {
    return { ...WebhookEndpointDto.from(view), ...(generatedSecret === undefined ? {} : { sharedSecret: generatedSecret }) };
  }
}

export class WebhookEndpointPageDto {
  /** The default endpoint first, then the others in creation order. */
  @ApiProperty({ type: [WebhookEndpointDto] })
  endpoints: WebhookEndpointDto[];

  /** Key of the next page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  nextPageKey: string | null;
}
