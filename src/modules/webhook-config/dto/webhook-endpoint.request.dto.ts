import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsObject,
  IsString,
  Length,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MAX_WEBHOOK_URL_LENGTH } from '../../../common/net/url-policy';
import { WEBHOOK_TYPES, WebhookType } from '../../domain-events/domain-event.catalogue';
import { MAX_ENDPOINT_DESCRIPTION_LENGTH, MAX_FILTER_CONTRACT_ADDRESSES } from '../webhook-endpoint.rules';

// Left out keeps (or defaults) a field; an explicit null is refused where the field has no "none".
const present = (field: string) => (dto: object) => (dto as Record<string, unknown>)[field] !== undefined;
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
  @ApiProperty({ type: String, required: false, minLength: 16, maxLength: 256, writeOnly: true })
  @ValidateIf(present('sharedSecret'))
  @IsString()
  @Length(16, 256)
  sharedSecret?: string;

  /** Sending on or off. Setting it (either way) clears a `disabledReason` the service left. */
  @ApiProperty({ type: Boolean, required: false })
  @ValidateIf(present('enabled'))
  @IsBoolean()
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
}

export class CreateWebhookEndpointDto extends WebhookEndpointFields {
  /**
   * Where webhooks are sent: an absolute http(s) URL of at most 2,048 characters without
   * credentials, under the same policy as the webhook configuration's url.
   */
  @ApiProperty({ type: String, maxLength: MAX_WEBHOOK_URL_LENGTH, example: 'https://example.com/webhooks' })
  @IsDefined()
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  url: string;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, example: ['transaction', 'nft'] })
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(WEBHOOK_TYPES.length)
  @ArrayUnique({ message: 'webhookTypes must not contain duplicates' })
  @IsIn(WEBHOOK_TYPES, { each: true })
  webhookTypes: WebhookType[];
}

/**
 * Any subset of the POST body; a field left out keeps its value, an empty body changes nothing.
 * On the default endpoint only url, enabled, sharedSecret and webhookTypes (it is the webhook
 * configuration, which has no description nor filters).
 */
export class UpdateWebhookEndpointDto extends WebhookEndpointFields {
  /** Where webhooks are sent (same policy as on POST). */
  @ApiProperty({ type: String, required: false, maxLength: MAX_WEBHOOK_URL_LENGTH, example: 'https://example.com/webhooks' })
  @ValidateIf(present('url'))
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  url?: string;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, required: false, example: ['transaction', 'nft'] })
  @ValidateIf(present('webhookTypes'))
  @IsArray()
  @ArrayMaxSize(WEBHOOK_TYPES.length)
  @ArrayUnique({ message: 'webhookTypes must not contain duplicates' })
  @IsIn(WEBHOOK_TYPES, { each: true })
  webhookTypes?: WebhookType[];
}
