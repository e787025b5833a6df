import { ApiProperty } from '@nestjs/swagger';
import { WEBHOOK_TYPES, type WebhookType } from '../../../common/webhook-types';

/** One kind of webhook body: a resourceType under a webhook type, with its actions and schema. */
export class EventTypeDto {
  @ApiProperty({ enum: WEBHOOK_TYPES, description: 'The type an endpoint subscribes to; it is not in the body.' })
  webhookType: WebhookType;

  @ApiProperty({ example: 'Token', description: 'The body’s `resourceType`; `WebhookTest` for test webhooks, under every type.' })
  resourceType: string;

  @ApiProperty({ type: [String], example: ['create', 'update'], description: 'Every `action` such a body can carry.' })
  actions: string[];

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'A self-contained JSON Schema (2020-12) of the whole body: the seven keys in the order they arrive, `changes` per ' +
      'action, and the optional `data` of full payloads, which is the schema this document gives the resource’s GET answer. ' +
      'Formats `uuid` and `uri` are used.',
  })
  schema: Record<string, unknown>;
}

export class EventTypeListDto {
  @ApiProperty({ type: [EventTypeDto], description: 'In webhook type order; `WebhookTest` last under each type.' })
  eventTypes: EventTypeDto[];
}
