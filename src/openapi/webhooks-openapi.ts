import type { OpenAPIObject } from '@nestjs/swagger';
import { WEBHOOK_TYPES, WebhookType } from '../modules/domain-events/domain-event.catalogue';

type Schema = Record<string, unknown>;

/** What the integrator receives for each webhook type (README.md "Webhooks"), for the documentation. */
const PRODUCERS: Record<WebhookType, Array<{ resourceType: string; action: string; changes: 'null' | 'tokenMetadata'; when: string }>> = {
  custodialAccount: [{ resourceType: 'Wallet', action: 'create', changes: 'null', when: 'POST /v1/wallets' }],
  nft: [
    { resourceType: 'Token', action: 'create', changes: 'null', when: 'POST /v1/tokens' },
    { resourceType: 'Token', action: 'update', changes: 'tokenMetadata', when: 'PATCH /v1/tokens/{tokenId}' },
  ],
  transaction: [
    {
      resourceType: 'Transaction',
      action: 'create',
      changes: 'null',
      when: 'POST /v1/transactions, and each movement of POST /v1/transactions/batch',
    },
  ],
  payment: [],
  kyc: [],
  document: [],
  operational: [],
};

const TITLES: Record<WebhookType, string> = {
  custodialAccount: 'Custodial account (wallet) events',
  nft: 'NFT (token) events',
  transaction: 'Transaction events',
  payment: 'Payment events',
  kyc: 'KYC events',
  document: 'Document events',
  operational: 'Operational events (endpoints and deliveries)',
};

const SENT_TYPES = WEBHOOK_TYPES.filter((type) => PRODUCERS[type].length > 0);
const NEVER_SENT = WEBHOOK_TYPES.filter((type) => PRODUCERS[type].length === 0);
const quoted = (types: readonly string[]) => types.map((type) => `\`${type}\``).join(', ');

/** Why some offered types never arrive: they complete a type set shared with the integrator's platform. */
export const RESERVED_TYPES =
  "This type is reserved for the integrator's own platform (it completes the set of webhook types that platform " +
  'shares) and this service never sends it: an endpoint may subscribe to it, and test webhooks (POST …/test with ' +
  'this `webhookType`) carry it, so a receiver can be built for it.';

const TYPES_SENT =
  `The service itself sends ${quoted(SENT_TYPES)}; ${quoted(NEVER_SENT)} are reserved for the integrator's own ` +
  'platform and arrive only as test webhooks (POST …/test can send any type).';

const TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}\\+00:00$';

const capitalize = (text: string) => `${text[0].toUpperCase()}${text.slice(1)}`;

/** Human form of a delay: 200ms, 5s, 2m, 1h, 1d. */
export function formatDelay(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

export const DEFAULT_RETRY_SCHEDULE = '5s, 30s, 2m, 10m, 30m, 1h, 3h, 6h, 12h, 24h';

export const VERIFYING = `
**Verifying a webhook.** Check the signature over the exact bytes received, before parsing them, with
either scheme (both are always sent):

- *Standard Webhooks* (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`): compute
  \`Base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}"))\` where \`key\` is the UTF-8
  bytes of the shared secret, and accept if it equals the value after \`v1,\` of any space-separated
  entry of \`webhook-signature\`. Reject a \`webhook-timestamp\` more than 5 minutes from your clock
  (replays). A Standard Webhooks library (e.g. npm \`standardwebhooks\`) takes the secret as
  \`whsec_\` + Base64(UTF-8 bytes of the shared secret).
- *Asymmetric* (endpoints with \`signing: {"asymmetric": true}\`): \`webhook-signature\` also holds
  \`v1a,<Base64(Ed25519 signature of "{webhook-id}.{webhook-timestamp}.{body}")>\` entries; verify one
  with the endpoint's \`publicKey\` (\`whpk_\` + Base64 of the raw 32-byte Ed25519 key).
- *Legacy header* \`x-service-webhook-hmac\`: \`Base64(HMAC-SHA256(sharedSecret, body))\`, compared in
  constant time.

**Secret rotation.** After \`POST /api/organization/v1/current-organization/webhook-config/rotate-secret\`
the new secret signs \`x-service-webhook-hmac\` and the first \`webhook-signature\` entry; until
\`previousSecretExpiresAtUtc\` the replaced secret also signs \`x-service-webhook-hmac-previous\` and a
second \`webhook-signature\` entry. Accept either secret during the overlap.

**Delivery.** At least once: the same \`id\` on every attempt and redelivery, so deduplicate on it;
order is not guaranteed. Answer any 2xx within the timeout; anything else (timeout, connection error,
3xx, 4xx, 5xx) is a failed attempt and is retried. The first 1,024 bytes of your answer's body show in
the delivery log (\`responseBody\` of each attempt). An endpoint's custom \`headers\` arrive on every
webhook to it, and its \`rateLimitPerSecond\` bounds the attempts it gets in any one-second window.`;

function bodySchema(
  variant: { resourceType: string; action: string; changes: 'null' | 'tokenMetadata' },
  metadataRef: string | null,
): Schema {
  const changes: Schema =
    variant.changes === 'null'
      ? { type: 'null', description: 'Always null for this action.' }
      : {
          description:
            'Each token metadata field the update changed, with its new value (null when it was cleared). ' +
            'Fields that did not change are absent.',
          ...(metadataRef ? { $ref: metadataRef } : { type: 'object', additionalProperties: true }),
        };
  return {
    type: 'object',
    description: `${variant.resourceType} ${variant.action}. Keys arrive in this order.`,
    required: ['organizationId', 'action', 'id', 'resourceId', 'resourceType', 'createdAtUtc', 'changes'],
    additionalProperties: false,
    properties: {
      organizationId: { type: 'string', format: 'uuid', description: 'The organization the event belongs to.' },
      action: { type: 'string', const: variant.action },
      id: { type: 'string', format: 'uuid', description: 'The webhook id: the same on every attempt and redelivery; deduplicate on it.' },
      resourceId: {
        type: 'string',
        format: 'uuid',
        description:
          variant.resourceType === 'WebhookTest'
            ? 'A fresh id; there is nothing to fetch.'
            : `Fetch the ${variant.resourceType} with a GET by this id.`,
      },
      resourceType: { type: 'string', const: variant.resourceType },
      createdAtUtc: {
        type: 'string',
        pattern: TIMESTAMP,
        description: 'When the event happened (not when it was sent).',
        examples: ['2026-11-22T01:25:42.123456+00:00'],
      },
      changes,
    },
  };
}

function headerParameters(timeoutMs: number): Schema[] {
  const header = (name: string, description: string, schema: Schema, required = true) => ({
    name,
    in: 'header',
    required,
    description,
    schema,
  });
  return [
    header('user-agent', 'Identifies the sender.', { type: 'string', examples: ['nft-wallet-webhooks/1.0'] }),
    header(
      'x-service-webhook-id',
      'The body `id`: this webhook, one per event and endpoint, stable across retries, redeliveries and replays.',
      { type: 'string', format: 'uuid' },
    ),
    header(
      'x-service-webhook-event-id',
      "The event's id, shared by the webhooks one event sends to several endpoints (for the default endpoint it equals the webhook id).",
      { type: 'string', format: 'uuid' },
    ),
    header('x-service-webhook-attempt', 'Attempt number of this webhook, from 1; keeps counting across redeliveries.', {
      type: 'string',
      pattern: '^[1-9]\\d*$',
    }),
    header(
      'x-service-webhook-sequence',
      'Only for an endpoint with `ordering: resource`: the place of this webhook among those of its `resourceId` to the ' +
        'endpoint, 1, 2, 3… in event order, the same on every retry, redelivery and replay. Sequence n+1 is sent only once ' +
        'n succeeded or ended failed.',
      { type: 'string', pattern: '^[1-9]\\d*$' },
      false,
    ),
    header('x-service-webhook-hmac', 'Base64(HMAC-SHA256(sharedSecret, <the exact body bytes>)) with the current secret.', {
      type: 'string',
      format: 'byte',
    }),
    header(
      'x-service-webhook-hmac-previous',
      'The same with the secret replaced by the last rotation, only while `previousSecretExpiresAtUtc` has not passed.',
      { type: 'string', format: 'byte' },
      false,
    ),
    header('webhook-id', 'Standard Webhooks: the body `id`.', { type: 'string', format: 'uuid' }),
    header('webhook-timestamp', 'Standard Webhooks: unix seconds when this attempt was signed (each attempt is signed afresh).', {
      type: 'string',
      pattern: '^\\d+$',
      examples: ['1763774742'],
    }),
    header(
      'webhook-signature',
      'Standard Webhooks: space-separated `v1,<Base64(HMAC-SHA256(utf8(sharedSecret), "{webhook-id}.{webhook-timestamp}.{body}"))>` ' +
        'entries: the current secret first, then the previous one during a rotation; for an endpoint that signs asymmetrically, ' +
        'then `v1a,<Base64(Ed25519 signature of the same content)>` entries (current key, then the previous one during a rotation). ' +
        `The receiver has ${timeoutMs} ms to answer.`,
      { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$' },
    ),
    header(
      'authorization',
      'Only for an endpoint with `auth` (OAuth2 client credentials): `Bearer <access token>` obtained from its `tokenUrl`.',
      { type: 'string', pattern: '^Bearer .+$' },
      false,
    ),
  ];
}

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per webhook type, with the body schema of every
 * resource and action it carries, every header, how to verify and the retry schedule. Body
 * schemas go to components so clients can generate types for them.
 */
export function describeWebhooks(document: OpenAPIObject, delivery: { retryScheduleMs: readonly number[]; timeoutMs: number }): void {
  const schemas = ((document.components ??= {}).schemas ??= {}) as Record<string, Schema>;
  const metadataRef = schemas.TokenMetadataRequestDto ? '#/components/schemas/TokenMetadataRequestDto' : null;
  const schedule = delivery.retryScheduleMs.map(formatDelay).join(', ');
  const retries =
    `\n\n**Retries.** After each failed attempt the next comes after the schedule's delay with ±20% jitter; ` +
    `this deployment: ${schedule} (${delivery.retryScheduleMs.length + 1} attempts; default ${DEFAULT_RETRY_SCHEDULE}, ` +
    'set by `WEBHOOK_RETRY_SCHEDULE`). A 429 or 503 answer with `Retry-After` (seconds or an HTTP date, at most ' +
    '24 h counted) holds the next attempt back until then, with no jitter on that wait. After the last failure the ' +
    'webhook is `failed` and can be redelivered from the delivery log.';

  const webhooks: Record<string, unknown> = {};
  for (const type of WEBHOOK_TYPES) {
    const variants = [
      ...PRODUCERS[type],
      { resourceType: 'WebhookTest', action: 'test', changes: 'null' as const, when: 'POST …/webhook-config/test' },
    ];
    const names = variants.map((variant) => {
      const what = variant.resourceType === 'WebhookTest' ? 'Test' : `${variant.resourceType}${capitalize(variant.action)}`;
      const name = `${capitalize(type)}${what}WebhookBody`;
      schemas[name] = { title: name, ...bodySchema(variant, metadataRef) };
      return name;
    });
    const sent = variants.map((v) => `\`${v.resourceType}\`/\`${v.action}\` (${v.when})`).join('; ');
    const producers = PRODUCERS[type].length === 0 ? ` ${RESERVED_TYPES}` : '';
    webhooks[type] = {
      post: {
        operationId: `${type}Webhook`,
        summary: TITLES[type],
        tags: ['Webhooks'],
        description:
          `Sent to the configured url for organizations subscribed to \`${type}\` while the configuration is enabled ` +
          `(test webhooks whatever the switch). Carries: ${sent}.${producers}\n${VERIFYING}${retries}`,
        security: [],
        parameters: headerParameters(delivery.timeoutMs),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema:
                names.length === 1
                  ? { $ref: `#/components/schemas/${names[0]}` }
                  : { oneOf: names.map((name) => ({ $ref: `#/components/schemas/${name}` })) },
            },
          },
        },
        responses: {
          '200': { description: `Accepted: any 2xx answered within ${delivery.timeoutMs} ms ends the webhook's delivery.` },
          '400': { description: 'Any other answer (or none in time, or a redirect) is a failed attempt and is retried.' },
        },
      },
    };
  }
  (document as { webhooks?: unknown }).webhooks = webhooks;
  document.tags = [
    ...(document.tags ?? []).filter((tag) => tag.name !== 'Webhooks'),
    { name: 'Webhooks', description: `Signed POST requests this service sends to the organization's url. ${TYPES_SENT}\n${VERIFYING}` },
  ];
}
