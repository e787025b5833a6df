import type { OpenAPIObject } from '@nestjs/swagger';
import { WEBHOOK_TYPES, type WebhookType } from '../common/webhook-types';
import { declaredEventTypes } from '../extensions/registry';
import { BUILT_IN_EVENT_TYPES, changesDefinitions, dataComponentSchemas } from '../modules/event-types/event-catalogue';
import {
  listEventTypes,
  openApiWebhookBody,
  webhookBodyName,
  type EventTypeDefinition,
  type JsonSchema,
} from '../modules/event-types/event-schema.rules';

type Schema = Record<string, unknown>;

const TITLES: Record<WebhookType, string> = {
  custodialAccount: 'Custodial account (wallet) events',
  nft: 'NFT (token) events',
  transaction: 'Transaction events',
  payment: 'Payment events',
  kyc: 'KYC events',
  document: 'Document events',
  operational: 'Operational events (webhook endpoints and deliveries)',
};

const quoted = (types: readonly string[]) => types.map((type) => `\`${type}\``).join(', ');

/** Why some offered types never arrive: they complete a type set shared with the integrator's platform. */
export const RESERVED_TYPES =
  "This type is reserved for the integrator's own platform (it completes the set of webhook types that platform " +
  'shares) and this service never sends it: an endpoint may subscribe to it, and test webhooks (POST …/test with ' +
  'this `webhookType`) carry it, so a receiver can be built for it.';

/** Which types the service sends (those with an entry besides the test webhook) and which it only offers. */
function typesSent(entries: readonly EventTypeDefinition[]): { reserved: WebhookType[]; prose: string } {
  const sends = (type: WebhookType) => entries.some((e) => e.webhookType === type && e.resourceType !== 'WebhookTest');
  const sent = WEBHOOK_TYPES.filter(sends);
  const reserved = WEBHOOK_TYPES.filter((type) => !sends(type));
  const prose =
    `The service itself sends ${quoted(sent)}; ${quoted(reserved)} are reserved for the integrator's own ` +
    'platform and arrive only as test webhooks (POST …/test can send any type).';
  return { reserved, prose };
}

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
webhook to it, and its \`rateLimitPerSecond\` bounds the attempts it gets in any one-second window. Its
\`maxInFlight\` bounds the attempts in flight at once; within it fewer are sent at once while your answers
slow down or are 429 or 503 (each attempt's \`inFlightLimit\` in the delivery log shows the limit then).`;

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
 * The body components of every event type, from the event catalogue (GET /v1/event-types gives
 * the same schemas, self-contained): one per webhook type and resourceType, its `data` referring
 * to the component of the resource's GET answer. Returns the component names per webhook type.
 */
function describeBodies(schemas: Record<string, Schema>, entries: readonly EventTypeDefinition[]): Map<WebhookType, string[]> {
  // A GET answer no route declares (the plugin infers some from return types) is added here, as Nest would write it.
  for (const [name, schema] of Object.entries(dataComponentSchemas())) schemas[name] ??= schema;
  const components = { ...schemas } as Record<string, JsonSchema>;
  const shared = changesDefinitions(components);
  const names = new Map<WebhookType, string[]>(WEBHOOK_TYPES.map((type) => [type, []]));
  for (const entry of entries) {
    const { body, newComponents } = openApiWebhookBody(entry, components, shared);
    Object.assign(schemas, newComponents);
    const name = webhookBodyName(entry);
    schemas[name] = body;
    names.get(entry.webhookType)!.push(name);
  }
  return names;
}

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per webhook type, with the body schema of every
 * resource and action it carries, every header, how to verify and the retry schedule. Body
 * schemas go to components so clients can generate types for them.
 */
export function describeWebhooks(document: OpenAPIObject, delivery: { retryScheduleMs: readonly number[]; timeoutMs: number }): void {
  const schemas = ((document.components ??= {}).schemas ??= {}) as Record<string, Schema>;
  const entries = listEventTypes(WEBHOOK_TYPES, BUILT_IN_EVENT_TYPES, declaredEventTypes());
  const bodies = describeBodies(schemas, entries);
  const types = typesSent(entries);
  const schedule = delivery.retryScheduleMs.map(formatDelay).join(', ');
  const retries =
    `\n\n**Retries.** After each failed attempt the next comes after the schedule's delay with ±20% jitter; ` +
    `this deployment: ${schedule} (${delivery.retryScheduleMs.length + 1} attempts; default ${DEFAULT_RETRY_SCHEDULE}, ` +
    'set by `WEBHOOK_RETRY_SCHEDULE`). A 429 or 503 answer with `Retry-After` (seconds or an HTTP date, at most ' +
    '24 h counted) holds the next attempt back until then, with no jitter on that wait. After the last failure the ' +
    'webhook is `failed` and can be redelivered from the delivery log.';

  const webhooks: Record<string, unknown> = {};
  for (const type of WEBHOOK_TYPES) {
    const names = bodies.get(type)!;
    const sent = entries
      .filter((entry) => entry.webhookType === type)
      .flatMap((entry) => entry.actions.map((a) => `\`${entry.resourceType}\`/\`${a.action}\` (${a.when})`))
      .join('; ');
    const producers = types.reserved.includes(type) ? ` ${RESERVED_TYPES}` : '';
    webhooks[type] = {
      post: {
        operationId: `${type}Webhook`,
        summary: TITLES[type],
        tags: ['Webhooks'],
        description:
          `Sent to the configured url for organizations subscribed to \`${type}\` while the configuration is enabled ` +
          `(test webhooks whatever the switch). Carries: ${sent}. GET /v1/event-types serves each body's schema as a ` +
          `self-contained JSON Schema.${producers}\n${VERIFYING}${retries}`,
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
    { name: 'Webhooks', description: `Signed POST requests this service sends to the organization's url. ${types.prose}\n${VERIFYING}` },
  ];
}
