import { EntityRepository } from '@mikro-orm/postgresql';
import type { WebhookEndpoint } from './webhook-endpoint.entity';

export class WebhookEndpointRepository extends EntityRepository<WebhookEndpoint> {}
