import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { WEBHOOK_TYPES, WebhookType } from '../../domain-events/domain-event.catalogue';
import { MAX_WEBHOOK_URL_LENGTH } from '../../../common/net/url-policy';

const present = (field: string) => (dto: object) => (dto as Record<string, unknown>)[field] !== undefined;
const presentAndNotNull = (field: string) => (dto: object) => (dto as Record<string, unknown>)[field] != null;

/** Any subset of the fields; a field left out keeps its value, an empty body changes nothing. */
export class UpdateWebhookConfigDto {
  /**
   * The integrator's server that receives webhooks: an absolute http(s) URL of at most 2,048
   * characters without credentials. `https` is required, and private, loopback and link-local
   * targets (also through what the hostname resolves to) are refused, unless the deployment allows
   * them. `null` clears it (only while the configuration is disabled).
   */
  @ApiProperty({
    type: String,
    nullable: true,
    required: false,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'https://example.com/webhooks',
  })
  @ValidateIf(presentAndNotNull('url'))
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  url?: string | null;

  /** Switches sending on or off; enabling needs a url and a shared secret. */
  @ApiProperty({ type: Boolean, required: false })
  @ValidateIf(present('enabled'))
  @IsBoolean()
  enabled?: boolean;

  /**
   * Secret that signs every webhook (`x-service-webhook-hmac`), 16 to 256 characters. Write-only:
   * it is never returned, only `hasSharedSecret`. `null` removes it (only while disabled).
   */
  @ApiProperty({ type: String, nullable: true, required: false, minLength: 16, maxLength: 256, writeOnly: true })
  @ValidateIf(presentAndNotNull('sharedSecret'))
  @IsString()
  @Length(16, 256)
  sharedSecret?: string | null;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, required: false, example: ['transaction', 'nft'] })
  @ValidateIf(present('webhookTypes'))
  @IsArray()
  @ArrayMaxSize(WEBHOOK_TYPES.length)
  @ArrayUnique({ message: 'webhookTypes must not contain duplicates' })
  @IsIn(WEBHOOK_TYPES, { each: true })
  webhookTypes?: WebhookType[];
}
