import type { WebhookType } from '../../domain-events/domain-event.catalogue';
import { EnabledField, SharedSecretField, UrlField, WebhookTypesField } from './endpoint-fields';

/** Any subset of the fields; a field left out keeps its value, an empty body changes nothing. */
export class UpdateWebhookConfigDto {
  /**
   * The integrator's server that receives webhooks: an absolute http(s) URL of at most 2,048
   * characters without credentials. `https` is required, and private, loopback and link-local
   * targets (also through what the hostname resolves to) are refused, unless the deployment allows
   * them. `null` clears it (only while the configuration is disabled).
   */
  @UrlField({ nullable: true })
  url?: string | null;

  /** Switches sending on or off; enabling needs a url and a shared secret. */
  @EnabledField()
  enabled?: boolean;

  /**
   * Secret that signs every webhook (`x-service-webhook-hmac`), 16 to 256 characters. Write-only:
   * it is never returned, only `hasSharedSecret`. `null` removes it (only while disabled).
   */
  @SharedSecretField({ nullable: true })
  sharedSecret?: string | null;

  /** The webhook types to receive, each at most once; `[]` receives none. */
  @WebhookTypesField()
  webhookTypes?: WebhookType[];
}
