import { ApiProperty } from '@nestjs/swagger';
import { formatUtc } from '../../../common/time';
import { WEBHOOK_TYPES, WebhookType } from '../../domain-events/domain-event.catalogue';
import type { WebhookConfigView } from '../webhook-config.service';

export class WebhookConfigDto {
  /** Where webhooks are sent; null until set. */
  @ApiProperty({ type: String, nullable: true, example: 'https://example.com/webhooks' })
  url: string | null;

  /** Webhooks are sent only while enabled; every organization starts disabled. */
  enabled: boolean;

  /** The webhook types received, in catalogue order. */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, example: ['transaction', 'nft'] })
  webhookTypes: WebhookType[];

  /** Whether a shared secret is set. The secret itself is never returned. */
  hasSharedSecret: boolean;

  /**
   * While a rotation's overlap lasts, when the replaced secret stops signing; null when no previous
   * secret signs.
   */
  @ApiProperty({ type: String, nullable: true, example: '2026-11-24T10:00:00.000000+00:00' })
  previousSecretExpiresAtUtc: string | null;

  /** Last change; the organization's creation time while never changed. */
  updatedAtUtc: string;

  static from(view: WebhookConfigView): WebhookConfigDto {
    return {
      url: view.url,
      enabled: view.enabled,
      webhookTypes: [...view.webhookTypes],
      hasSharedSecret: view.hasSharedSecret,
      previousSecretExpiresAtUtc: formatUtc(view.previousSecretExpiresAt),
      updatedAtUtc: formatUtc(view.updatedAt),
    };
  }
}
