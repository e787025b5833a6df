import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { AuditActor } from '../audit/audit.service';
import type { WebhookType } from '../domain-events/domain-event.catalogue';
import type { WebhookEndpointView } from './webhook-endpoint.rules';
import { SecretRotation, WebhookEndpointsService } from './webhook-endpoints.service';

/** What `/webhook-config` shows: the default endpoint without its id, description and filter. */
export type WebhookConfigView = Pick<
  WebhookEndpointView,
  'url' | 'enabled' | 'webhookTypes' | 'hasSharedSecret' | 'previousSecretExpiresAt' | 'disabledReason' | 'updatedAt'
>;

export interface WebhookConfigUpdate {
  url?: string | null;
  enabled?: boolean;
  sharedSecret?: string | null;
  webhookTypes?: WebhookType[];
}

/**
 * `/webhook-config`, the organization's first and simplest way to receive webhooks: a view of
 * its default endpoint (id = the organization's id). Every rule is the endpoint service's.
 */
@Injectable()
export class WebhookConfigService {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  get(organizationId: string): Promise<WebhookConfigView> {
    return this.endpoints.get(organizationId, organizationId);
  }

  update(organizationId: string, input: WebhookConfigUpdate, actor: AuditActor, meta: RequestMeta): Promise<WebhookConfigView> {
    const { url, enabled, sharedSecret, webhookTypes } = input;
    return this.endpoints.update(organizationId, organizationId, { url, enabled, sharedSecret, webhookTypes }, actor, meta);
  }

  rotateSecret(
    organizationId: string,
    input: { sharedSecret?: string; previousSecretValidSeconds?: number },
    actor: AuditActor,
    meta: RequestMeta,
  ): Promise<SecretRotation> {
    return this.endpoints.rotateSecret(organizationId, organizationId, input, actor, meta);
  }
}
