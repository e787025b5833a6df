import { Injectable, OnModuleInit } from '@nestjs/common';
import { EventResources } from '../../domain-events/event-resources';
import { WebhookDetailDto } from './webhook.dto';
import { WebhooksService } from './webhooks.service';

/**
 * `operational` `exhausted` events are about a webhook: full bodies and content filters see it as
 * GET …/webhooks/{id} answers (its body as sent and every attempt).
 */
@Injectable()
export class DeliveryLogResources implements OnModuleInit {
  constructor(
    private readonly resources: EventResources,
    private readonly webhooks: WebhooksService,
  ) {}

  onModuleInit(): void {
    this.resources.register('Webhook', async (organizationId, ids) => {
      const found = new Map<string, unknown>();
      for (const id of ids) {
        const entry = await this.webhooks.find(organizationId, id);
        if (entry) found.set(id, WebhookDetailDto.fromLog(entry.delivery, entry.attempts));
      }
      return found;
    });
  }
}
