import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, IsString, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import type { WebhookType } from '../../domain-events/domain-event.catalogue';
import type { EndpointOrdering } from '../webhook-endpoint.rules';
import { EnabledField, OrderingField, SharedSecretField, UrlField, WebhookTypesField } from './endpoint-fields';
import { MAX_ENDPOINT_DESCRIPTION_LENGTH, MAX_FILTER_CONTRACT_ADDRESSES } from '../webhook-endpoint.rules';

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

  /** `none` (default) or `resource`: see the endpoint's `ordering`. */
  @OrderingField()
  ordering?: EndpointOrdering;
}

export class CreateWebhookEndpointDto extends WebhookEndpointFields {
  /**
   * Where webhooks are sent: an absolute http(s) URL of at most 2,048 characters without
   * credentials, under the same policy as the webhook configuration's url.
   */
  @UrlField({ required: true })
  url: string;

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
  /** Where webhooks are sent (same policy as on POST). */
  @UrlField()
  url?: string;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @WebhookTypesField()
  webhookTypes?: WebhookType[];
}
