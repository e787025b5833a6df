import { MAX_WEBHOOK_URL_LENGTH } from '../../../common/net/url-policy';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import type { WebhookType } from '../../domain-events/domain-event.catalogue';
import { AUTH_TYPES } from '../endpoint-auth.rules';
import { MAX_PEM_LENGTH } from '../endpoint-tls.rules';
import type { EndpointOrdering } from '../webhook-endpoint.rules';
import { destinationProperty } from './destination.dto';
import { EnabledField, OrderingField, SharedSecretField, UrlField, WebhookTypesField } from './endpoint-fields';
import { MAX_FILTER_CONTRACT_ADDRESSES, PAYLOAD_KINDS, PayloadKind, RETRY_SCHEDULE_LIMITS } from '../receiver-choices.rules';
import { MAX_ENDPOINT_DESCRIPTION_LENGTH } from '../webhook-endpoint.rules';
import {
  MAX_CUSTOM_HEADER_VALUE_LENGTH,
  MAX_CUSTOM_HEADERS,
  MAX_MAX_IN_FLIGHT,
  MAX_RATE_LIMIT_PER_SECOND,
  MIN_MAX_IN_FLIGHT,
  MIN_RATE_LIMIT_PER_SECOND,
} from '../receiver-options.rules';

// Left out keeps (or defaults) a field; null is "none" for the fields that have one.
const presentAndNotNull = (field: string) => (dto: object) => (dto as Record<string, unknown>)[field] != null;

export class WebhookEndpointFiltersRequestDto {
  /**
   * Limits `nft` and `transaction` webhooks to tokens of these contracts: 1 to 1,000 addresses,
   * lowercase, uppercase hex or EIP-55 (a wrong checksum is a 400). Repeats are dropped. Left out
   * or null: no filter.
   */
  @ApiProperty({
    type: [String],
    nullable: true,
    required: false,
    minItems: 1,
    maxItems: MAX_FILTER_CONTRACT_ADDRESSES,
    example: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
  })
  @ValidateIf(presentAndNotNull('contractAddresses'))
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_FILTER_CONTRACT_ADDRESSES)
  contractAddresses?: string[] | null;
}

export class WebhookEndpointSigningRequestDto {
  /**
   * True: the endpoint gets an Ed25519 key pair and every webhook to it carries a Standard Webhooks
   * `v1a,` signature beside the `v1,` ones (its public key shows as `publicKey`). Setting true again
   * keeps the pair; false drops it.
   */
  @ApiProperty({ type: Boolean, example: true })
  @IsDefined()
  @IsBoolean()
  asymmetric: boolean;
}

export class WebhookEndpointAuthRequestDto {
  /** The only kind: OAuth2 client credentials (RFC 6749 section 4.4). */
  @ApiProperty({ enum: AUTH_TYPES, example: 'oauth2ClientCredentials' })
  @IsDefined()
  @IsIn(AUTH_TYPES)
  type: string;

  /**
   * The token endpoint, under the same policy as webhook URLs (https, public addresses, allowed
   * ports). The service POSTs `grant_type=client_credentials` there with HTTP Basic client
   * authentication (`client_secret_basic`).
   */
  @ApiProperty({ type: String, maxLength: MAX_WEBHOOK_URL_LENGTH, example: 'https://auth.example.com/oauth2/token' })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  tokenUrl: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: 256, example: 'nft-wallet-webhooks' })
  @IsDefined()
  @IsString()
  @Length(1, 256)
  clientId: string;

  /** Write-only: sealed at rest, never returned (`hasClientSecret`), never logged. */
  @ApiProperty({ type: String, minLength: 1, maxLength: 1024, writeOnly: true })
  @IsDefined()
  @IsString()
  @Length(1, 1024)
  clientSecret: string;

  /** Space-separated scopes to ask for; left out or null asks for the client's default scope. */
  @ApiProperty({ type: String, nullable: true, required: false, maxLength: 1024, example: 'webhooks:write' })
  @ValidateIf(presentAndNotNull('scope'))
  @IsString()
  @MaxLength(1024)
  scope?: string | null;
}

export class WebhookEndpointTlsRequestDto {
  /** The client certificate (PEM) presented to the receiver; a chain may follow it. */
  @ApiProperty({ type: String, maxLength: MAX_PEM_LENGTH, example: '-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----' })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_PEM_LENGTH)
  clientCertificate: string;

  /** Its private key, unencrypted PEM. Write-only: sealed at rest, never returned (`hasClientKey`), never logged. */
  @ApiProperty({ type: String, maxLength: MAX_PEM_LENGTH, writeOnly: true })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_PEM_LENGTH)
  clientKey: string;

  /** A private CA (PEM, one or more certificates) trusted for this endpoint only, beside the public ones. */
  @ApiProperty({ type: String, nullable: true, required: false, maxLength: MAX_PEM_LENGTH })
  @ValidateIf(presentAndNotNull('caCertificate'))
  @IsString()
  @MaxLength(MAX_PEM_LENGTH)
  caCertificate?: string | null;
}

/** The fields both POST and PATCH take; every one optional here (PATCH is any subset). */
class WebhookEndpointFields {
  /**
   * Secret that signs every webhook sent to this endpoint, 16 to 256 characters. Write-only: never
   * returned, only `hasSharedSecret`. On POST, left out, the service generates one and returns it
   * once. On PATCH it replaces the secret at once and drops any previous one (use rotate-secret
   * for an overlap).
   */
  @SharedSecretField()
  sharedSecret?: string;

  /** Sending on or off. Setting it (either way) clears a `disabledReason` the service left. */
  @EnabledField()
  enabled?: boolean;

  /** Free text to tell endpoints apart, at most 500 characters; null clears it. */
  @ApiProperty({
    type: String,
    nullable: true,
    required: false,
    maxLength: MAX_ENDPOINT_DESCRIPTION_LENGTH,
    example: 'Data warehouse ingest',
  })
  @ValidateIf(presentAndNotNull('description'))
  @IsString()
  @MaxLength(MAX_ENDPOINT_DESCRIPTION_LENGTH)
  description?: string | null;

  /**
   * Which webhooks this endpoint receives, beyond its types. The whole filter is replaced: `{}`,
   * `{contractAddresses: null}` or null remove it.
   */
  @ApiProperty({ type: WebhookEndpointFiltersRequestDto, nullable: true, required: false })
  @ValidateIf(presentAndNotNull('filters'))
  @IsObject()
  @ValidateNested()
  @Type(() => WebhookEndpointFiltersRequestDto)
  filters?: WebhookEndpointFiltersRequestDto | null;

  /** Asymmetric (Ed25519) signing beside the shared secret; null is `{asymmetric: false}`. */
  @ApiProperty({ type: WebhookEndpointSigningRequestDto, nullable: true, required: false })
  @ValidateIf(presentAndNotNull('signing'))
  @IsObject()
  @ValidateNested()
  @Type(() => WebhookEndpointSigningRequestDto)
  signing?: WebhookEndpointSigningRequestDto | null;

  /**
   * How the service authenticates to the receiver beyond the signatures: OAuth2 client
   * credentials, the token sent as `Authorization: Bearer`. Replaced whole (the client secret is
   * required each time); null removes it.
   */
  @ApiProperty({ type: WebhookEndpointAuthRequestDto, nullable: true, required: false })
  @ValidateIf(presentAndNotNull('auth'))
  @IsObject()
  @ValidateNested()
  @Type(() => WebhookEndpointAuthRequestDto)
  auth?: WebhookEndpointAuthRequestDto | null;

  /**
   * Mutual TLS towards the receiver: the client certificate and key the service presents, and
   * optionally a private CA to trust. A certificate that does not parse or a key that does not
   * belong to it is a 400 naming the field. Replaced whole; null removes it.
   */
  @ApiProperty({ type: WebhookEndpointTlsRequestDto, nullable: true, required: false })
  @ValidateIf(presentAndNotNull('tls'))
  @IsObject()
  @ValidateNested()
  @Type(() => WebhookEndpointTlsRequestDto)
  tls?: WebhookEndpointTlsRequestDto | null;

  /**
   * Custom headers sent on every webhook to this endpoint, such as a token your gateway checks:
   * at most 10, each name an HTTP token given once (case-insensitive), each value at most 1,024
   * visible ASCII characters and spaces (no CR or LF). The webhook's own headers cannot be set:
   * content-type, host, user-agent, the signature, id and timestamp headers (every
   * `x-service-webhook-*` and `webhook-*` name) and the headers that frame the request
   * (content-length, transfer-encoding, connection, keep-alive, upgrade, expect, te, trailer,
   * proxy-connection, traceparent, tracestate); nor can credentials (authorization and
   * proxy-authorization, in any case: authentication goes through `auth`): a 400 names the
   * header (`headers.<name>`). The whole set is replaced; null or `{}` removes them. Shown by GET
   * as set. Their values never appear in the delivery log: an answer echoing one shows `[redacted]`.
   */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: MAX_CUSTOM_HEADER_VALUE_LENGTH },
    maxProperties: MAX_CUSTOM_HEADERS,
    nullable: true,
    example: { 'X-Gateway-Token': 'gw_4f1c9a', 'X-Tenant': 'acme' },
  })
  // Names and values are checked by parseCustomHeaders, which names the header in its 400.
  @ValidateIf(presentAndNotNull('headers'))
  @IsObject()
  headers?: Record<string, string> | null;

  /**
   * At most this many attempts reach this endpoint in any fixed one-second window, across every
   * worker (so at most twice that within any sliding second): an integer from 1 to 10,000. Null
   * (the default) is unlimited. Webhooks past the limit wait for a later second: waiting is not
   * an attempt, never ends a webhook failed and never delays another endpoint's webhooks.
   */
  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_RATE_LIMIT_PER_SECOND,
    maximum: MAX_RATE_LIMIT_PER_SECOND,
    nullable: true,
    example: 50,
  })
  @ValidateIf(presentAndNotNull('rateLimitPerSecond'))
  @IsInt()
  @Min(MIN_RATE_LIMIT_PER_SECOND)
  @Max(MAX_RATE_LIMIT_PER_SECOND)
  rateLimitPerSecond?: number | null;

  /**
   * At most this many attempts to this endpoint are in flight at once, across every worker: an
   * integer from 1 to 1,000. Within it the limit adapts: it starts at 10 (or this, if lower),
   * grows while the receiver's latency holds, falls by a fifth when latency grows (never below
   * where it started) and halves, down to 1, when the receiver answers 429 or 503, times out or
   * cannot be reached. Null (the default): the service's fixed WEBHOOK_PER_RECEIVER_CONCURRENCY
   * (10) per worker process, which does not adapt. Each attempt in the delivery log shows the
   * limit it started under (`inFlightLimit`).
   */
  @ApiPropertyOptional({ type: 'integer', minimum: MIN_MAX_IN_FLIGHT, maximum: MAX_MAX_IN_FLIGHT, nullable: true, example: 50 })
  @ValidateIf(presentAndNotNull('maxInFlight'))
  @IsInt()
  @Min(MIN_MAX_IN_FLIGHT)
  @Max(MAX_MAX_IN_FLIGHT)
  maxInFlight?: number | null;

  /** `none` (default) or `resource`: see the endpoint's `ordering`. */
  @OrderingField()
  ordering?: EndpointOrdering;

  /**
   * `thin` (default): the event's envelope, as every receiver gets it. `full`: the envelope and a
   * last key `data`, the resource as its GET answers right after the change (see the event
   * catalogue, `GET /v1/event-types`). Anything else is a 400.
   */
  @ApiPropertyOptional({ enum: PAYLOAD_KINDS, default: 'thin' })
  @ValidateIf((dto: { payload?: unknown }) => dto.payload !== undefined)
  @IsIn(PAYLOAD_KINDS)
  payload?: PayloadKind;

  /**
   * A content filter (JSON-match syntax: literals, nested objects, `$eq $neq $gt $gte $lt $lte $in
   * $nin $exist $startsWith $or $and $not`) matched against `{webhookType, resourceType, action,
   * organizationId, resourceId, changes, data}`; an event that does not match makes no webhook for
   * this endpoint. At most 10 keys deep, 100 nodes and 8 KiB; a 400 names the offending path
   * (`filter.data.amount.$gt`). Null (the default) removes it. Not on the default endpoint.
   */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { resourceType: 'Token', data: { contractAddress: { $in: ['0x5fbdb2315678afecb367f032d93f642f64180aa3'] } } },
  })
  @ValidateIf(presentAndNotNull('filter'))
  @IsObject()
  filter?: Record<string, unknown> | null;

  /**
   * This endpoint's own retry delays in seconds: 1 to 20 integers of 1 to 86,400, the first used
   * after the first failed attempt (so a webhook gets entries + 1 attempts), each with at most ±10 %
   * jitter. A longer `Retry-After` from the receiver still wins. Null (the default): the service's schedule.
   */
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'integer', minimum: RETRY_SCHEDULE_LIMITS.minSeconds, maximum: RETRY_SCHEDULE_LIMITS.maxSeconds },
    minItems: RETRY_SCHEDULE_LIMITS.minEntries,
    maxItems: RETRY_SCHEDULE_LIMITS.maxEntries,
    nullable: true,
    example: [10, 60, 600, 3600],
  })
  @ValidateIf(presentAndNotNull('retrySchedule'))
  @IsArray()
  @ArrayMinSize(RETRY_SCHEDULE_LIMITS.minEntries)
  @ArrayMaxSize(RETRY_SCHEDULE_LIMITS.maxEntries)
  @IsInt({ each: true })
  @Min(RETRY_SCHEDULE_LIMITS.minSeconds, { each: true })
  @Max(RETRY_SCHEDULE_LIMITS.maxSeconds, { each: true })
  retrySchedule?: number[] | null;

  /**
   * A message broker to publish to instead of an HTTP url (RabbitMQ, NATS JetStream or MQTT 5):
   * give either `url` or `destination`. PATCH replaces it whole; `{url, destination: null}` switches
   * back to HTTP, `{url: null, destination}` to a broker. Not on the default endpoint (422
   * `DEFAULT_ENDPOINT`); `auth` is HTTP's only (400 naming `auth`); `tls` applies to amqps, mqtts
   * and NATS TLS. Each field is checked (400 naming `destination.<field>`); the broker is not
   * contacted until the first attempt.
   */
  @ApiPropertyOptional(
    destinationProperty(
      'A message broker instead of an HTTP url; give either `url` or `destination`. PATCH replaces it whole, except that a url ' +
        'whose password is `***` keeps the stored password; null switches back to HTTP (with a `url`).',
    ),
  )
  // Checked field by field by parseDestinationInput, which names the field in its 400.
  @ValidateIf(presentAndNotNull('destination'))
  @IsObject()
  destination?: Record<string, unknown> | null;
}

export class CreateWebhookEndpointDto extends WebhookEndpointFields {
  /**
   * Where webhooks are sent: an absolute http(s) URL of at most 2,048 characters without
   * credentials, under the same policy as the webhook configuration's url. Left out or null for a
   * broker endpoint (`destination`).
   */
  @UrlField({ nullable: true })
  url?: string | null;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @WebhookTypesField({ required: true })
  webhookTypes: WebhookType[];
}

/**
 * Any subset of the POST body; a field left out keeps its value, an empty body changes nothing.
 * On the default endpoint only url, enabled, sharedSecret, webhookTypes and ordering (it is the
 * webhook configuration, which has no description nor filters).
 */
export class UpdateWebhookEndpointDto extends WebhookEndpointFields {
  /** Where webhooks are sent (same policy as on POST); null with a `destination` switches to a broker. */
  @UrlField({ nullable: true })
  url?: string | null;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @WebhookTypesField()
  webhookTypes?: WebhookType[];
}
