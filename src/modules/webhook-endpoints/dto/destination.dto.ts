import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { MAX_WEBHOOK_URL_LENGTH } from '../../../common/net/url-policy';
import { MAX_NAME_LENGTH, MAX_TEMPLATE_LENGTH } from '../destination.rules';

const TEMPLATE =
  'A template of at most 255 characters: `{webhookType}`, `{action}`, `{resourceType}`, `{resourceId}` and `{organizationId}` ' +
  'are replaced by the webhook’s values when the attempt is made; all other text is literal.';
const URL_NOTE =
  'In answers the password shows as `***`; sent back in a PATCH, a url whose password is `***` keeps the stored one. The user ' +
  'and password are sealed at rest and never logged or audited in clear.';

/** RabbitMQ (AMQP 0-9-1): published on a confirm channel, mandatory and persistent. */
export class RabbitMqDestinationDto {
  @ApiProperty({ enum: ['rabbitmq'], example: 'rabbitmq' })
  type: 'rabbitmq';

  @ApiProperty({
    type: String,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'amqps://webhooks:***@rabbit.example.com:5671/events',
    description: `\`amqp://\` or \`amqps://\`, \`[user:password@]host[:port][/vhost]\`. ${URL_NOTE}`,
  })
  url: string;

  @ApiProperty({
    type: String,
    maxLength: MAX_NAME_LENGTH,
    example: 'nft-webhooks',
    description: 'The exchange published to (letters, digits, `-_.:`); `""` is the default exchange. Not created by the service.',
  })
  exchange: string;

  @ApiProperty({
    type: String,
    maxLength: MAX_TEMPLATE_LENGTH,
    example: 'webhooks.{webhookType}.{action}',
    description: `The routing key. ${TEMPLATE} An unroutable message is a failed attempt with \`error: "NO_ROUTE"\`.`,
  })
  routingKey: string;
}

/** NATS JetStream: acknowledged by the stream's PubAck, deduplicated by `Nats-Msg-Id`. */
export class NatsDestinationDto {
  @ApiProperty({ enum: ['nats'], example: 'nats' })
  type: 'nats';

  @ApiProperty({
    type: String,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'nats://webhooks:***@nats.example.com:4222',
    description: `\`nats://[user:password@]host[:port]\`; TLS when the server asks for it. ${URL_NOTE}`,
  })
  url: string;

  @ApiProperty({
    type: String,
    maxLength: MAX_TEMPLATE_LENGTH,
    example: 'webhooks.{webhookType}.{resourceType}',
    description: `The subject. ${TEMPLATE} No empty token, space, \`*\` or \`>\`.`,
  })
  subject: string;

  @ApiProperty({
    type: String,
    maxLength: MAX_NAME_LENGTH,
    example: 'WEBHOOKS',
    description:
      'The JetStream stream whose PubAck confirms each message (required: core NATS has no acknowledgement). Not created by the service.',
  })
  stream: string;
}

/** MQTT 5: QoS 1, not retained, acknowledged by PUBACK. */
export class MqttDestinationDto {
  @ApiProperty({ enum: ['mqtt'], example: 'mqtt' })
  type: 'mqtt';

  @ApiProperty({
    type: String,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'mqtts://webhooks:***@mqtt.example.com:8883',
    description: `\`mqtt://\` or \`mqtts://\`, \`[user:password@]host[:port]\`. ${URL_NOTE}`,
  })
  url: string;

  @ApiProperty({
    type: String,
    maxLength: MAX_TEMPLATE_LENGTH,
    example: 'webhooks/{webhookType}/{resourceId}',
    description: `The topic. ${TEMPLATE} No \`+\`, \`#\` or NUL.`,
  })
  topic: string;

  @ApiProperty({ enum: [1], example: 1, description: 'Always 1: at least once, acknowledged by PUBACK.' })
  qos: 1;
}

export const DESTINATION_DTOS = [RabbitMqDestinationDto, NatsDestinationDto, MqttDestinationDto];

const MESSAGE_NOTE =
  'The message body is exactly the bytes an HTTP endpoint receives; the headers (AMQP headers table, NATS headers, MQTT 5 user ' +
  'properties) are the HTTP ones by the same names: `webhook-id`, `webhook-timestamp`, `webhook-signature`, ' +
  '`x-service-webhook-hmac` (and `-previous` during a rotation), `x-service-webhook-id`, `x-service-webhook-event-id`, ' +
  '`x-service-webhook-attempt`, `x-service-webhook-sequence` (ordering `resource`), `traceparent` (tracing on), the ' +
  'endpoint’s own `headers` and `content-type: application/json`. RabbitMQ also sets `messageId` = the webhook id, ' +
  '`contentType` and delivery mode 2; NATS sets `Nats-Msg-Id` = the webhook id.';

/** The `destination` property: one schema per type, told apart by `type`. */
export function destinationProperty(description: string) {
  return {
    oneOf: DESTINATION_DTOS.map((dto) => ({ $ref: getSchemaPath(dto) })),
    discriminator: {
      propertyName: 'type',
      mapping: {
        rabbitmq: getSchemaPath(RabbitMqDestinationDto),
        nats: getSchemaPath(NatsDestinationDto),
        mqtt: getSchemaPath(MqttDestinationDto),
      },
    },
    nullable: true,
    required: false,
    description: `${description} ${MESSAGE_NOTE}`,
  };
}

export type DestinationDto = RabbitMqDestinationDto | NatsDestinationDto | MqttDestinationDto;
