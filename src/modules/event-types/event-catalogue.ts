import type { Type } from '@nestjs/common';
import { generateSchema } from '@nestjs/swagger';
import { TokenMediaDto } from '../media/dto/token-media.response.dto';
import { SpamDto } from '../spam/dto/spam.response.dto';
import { TokenDto, TokenMetadataDto } from '../tokens/dto/token.response.dto';
import { METADATA_FIELDS } from '../tokens/token-metadata.rules';
import { TransactionDto } from '../transactions/dto/transaction.response.dto';
import { WalletDto } from '../wallets/dto/wallet.response.dto';
import { WebhookEndpointDto } from '../webhook-endpoints/dto/webhook-endpoint.response.dto';
import { DESTINATION_DTOS } from '../webhook-endpoints/dto/destination.dto';
import { WebhookDetailDto } from '../webhooks/api/webhook.dto';
import type { EventTypeDefinition, JsonSchema } from './event-schema.rules';

/**
 * What the service itself sends, per webhook type and resourceType: each action with its
 * `changes`, and the GET answer a full payload's `data` carries. Test webhooks and extension
 * modules' event types are added by listEventTypes.
 */

const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
const ENDPOINTS = '/api/organization/v1/current-organization';

export const BUILT_IN_EVENT_TYPES: readonly EventTypeDefinition[] = [
  {
    webhookType: 'transaction',
    resourceType: 'Transaction',
    actions: [
      { action: 'create', changes: null, when: 'POST /v1/transactions, each movement of POST /v1/transactions/batch, a chain movement' },
      { action: 'update', changes: ref('TransactionUpdateChanges'), when: "a chain reorg replaced the movement's block" },
    ],
    data: { kind: 'resource', schema: TransactionDto.name, route: 'GET /v1/transactions/{transactionId}' },
  },
  {
    webhookType: 'nft',
    resourceType: 'Token',
    actions: [
      { action: 'create', changes: null, when: 'POST /v1/tokens, a token first seen on a chain' },
      {
        action: 'update',
        changes: ref('TokenUpdateChanges'),
        when: "PATCH /v1/tokens/{tokenId}, metadata fetched from a chain, its image fetched, its contract's spam classification",
      },
    ],
    data: { kind: 'resource', schema: TokenDto.name, route: 'GET /v1/tokens/{tokenId}' },
  },
  {
    webhookType: 'custodialAccount',
    resourceType: 'Wallet',
    actions: [{ action: 'create', changes: null, when: 'POST /v1/wallets' }],
    data: { kind: 'resource', schema: WalletDto.name, route: 'GET /v1/wallets/{walletId}' },
  },
  {
    webhookType: 'operational',
    resourceType: 'WebhookEndpoint',
    actions: [
      {
        action: 'disabled',
        changes: ref('WebhookEndpointDisabledChanges'),
        when: 'the endpoint was switched off: by a PATCH, or by the service when it kept failing',
      },
      { action: 'enabled', changes: ref('WebhookEndpointEnabledChanges'), when: 'the endpoint was switched on' },
      { action: 'failing', changes: null, when: "the endpoint's attempts started failing" },
      { action: 'recovered', changes: null, when: 'a failing endpoint answered successfully again' },
    ],
    data: { kind: 'resource', schema: WebhookEndpointDto.name, route: `GET ${ENDPOINTS}/webhook-endpoints/{endpointId}` },
  },
  {
    webhookType: 'operational',
    resourceType: 'Webhook',
    actions: [{ action: 'exhausted', changes: ref('WebhookExhaustedChanges'), when: 'a webhook failed its last attempt' }],
    data: { kind: 'resource', schema: WebhookDetailDto.name, route: `GET ${ENDPOINTS}/webhooks/{webhookId}` },
  },
];

/** The GET answers `data` carries; the schemas `changes` reuses are parts of them. */
export const DATA_DTOS: readonly Type[] = [TransactionDto, TokenDto, WalletDto, WebhookEndpointDto, WebhookDetailDto];

/** The OpenAPI component schemas of the GET answers and of all they refer to, as Nest's scanner writes them. */
export function dataComponentSchemas(): Record<string, JsonSchema> {
  let schemas: Record<string, JsonSchema> = {};
  // An endpoint's destination refers to its per-type schemas by name only (oneOf): they are generated beside it.
  for (const dto of [...DATA_DTOS, ...DESTINATION_DTOS]) schemas = generateSchema(dto, schemas).schemas as Record<string, JsonSchema>;
  return schemas;
}

const closedObject = (description: string, properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  description,
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});

/**
 * The named schemas of `changes`. A token's are derived from the component schemas of its GET
 * answer (`components`, in the form the caller uses), so a field's change reads as the field does.
 *
 * Every producer of `nft` `update` is covered, hence `additionalProperties: false`: a metadata
 * PATCH and fetched chain metadata (the changed metadata fields), the spam classification
 * (`spam`), the image fetch (`media`, the token's `media` without its signed thumbnail links).
 */
export function changesDefinitions(components: Readonly<Record<string, JsonSchema>>): Record<string, JsonSchema> {
  const metadata = componentProperties(components, TokenMetadataDto.name);
  const { thumbnails: _links, ...media } = componentProperties(components, TokenMediaDto.name);
  return {
    TokenUpdateChanges: {
      type: 'object',
      description:
        'What changed, with its new value: metadata fields (null when cleared; fields that did not change are absent), ' +
        "or `spam` (the contract's new classification), or `media` (the new state of the image fetch, as the token's " +
        '`media` without `thumbnails`).',
      minProperties: 1,
      additionalProperties: false,
      properties: {
        ...Object.fromEntries(METADATA_FIELDS.map((field) => [field, metadata[field]])),
        spam: ref(SpamDto.name),
        media: ref('TokenMediaState'),
      },
    },
    TokenMediaState: closedObject("The token's image fetch: its `media` without the signed thumbnail links.", media),
    TransactionUpdateChanges: closedObject('A chain reorg replaced the block: the movement is reverted and its balance change undone.', {
      status: { type: 'string', const: 'reverted' },
    }),
    WebhookEndpointDisabledChanges: closedObject('`disabledReason` is `failing` when the service switched it off, else null.', {
      enabled: { type: 'boolean', const: false },
      disabledReason: { type: ['string', 'null'], enum: ['failing', null] },
    }),
    WebhookEndpointEnabledChanges: closedObject('Switched on again; any reason it was off is cleared.', {
      enabled: { type: 'boolean', const: true },
      disabledReason: { type: 'null' },
    }),
    WebhookExhaustedChanges: closedObject('The endpoint the webhook was for; it can be redelivered from the delivery log.', {
      endpointId: { type: 'string', format: 'uuid' },
    }),
  };
}

function componentProperties(components: Readonly<Record<string, JsonSchema>>, name: string): Record<string, JsonSchema> {
  const properties = components[name]?.properties as Record<string, JsonSchema> | undefined;
  if (!properties) throw new Error(`No component schema ${name} with properties`);
  return properties;
}
