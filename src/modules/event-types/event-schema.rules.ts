import type { WebhookType } from '../../common/webhook-types';

/**
 * Builds the JSON Schema of every webhook body from the catalogue (event-catalogue.ts) and the
 * OpenAPI component schemas of the resources' GET answers. Pure: the same functions give the
 * self-contained schemas of GET /v1/event-types and the bodies of the OpenAPI `webhooks` section,
 * so the two cannot drift apart.
 */

export type JsonSchema = Record<string, unknown>;

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The body's keys, in the order they arrive; `data` follows for endpoints that ask for full payloads. */
export const ENVELOPE_KEYS = ['organizationId', 'action', 'id', 'resourceId', 'resourceType', 'createdAtUtc', 'changes'] as const;

const DEFS = '#/$defs/';
const COMPONENTS = '#/components/schemas/';

export interface EventActionDefinition {
  action: string;
  /** The schema of `changes` for this action; null when `changes` is always null. */
  changes: JsonSchema | null;
  /** What makes the service send it, for the documentation. */
  when: string;
}

/**
 * What `data` holds in a full payload: the resource as its GET route answers it (the name of
 * that answer's component schema), nothing (`null`), or a resource this catalogue does not
 * describe (an extension's).
 */
export type EventData = { kind: 'resource'; schema: string; route: string } | { kind: 'none' } | { kind: 'undescribed' };

export interface EventTypeDefinition {
  webhookType: WebhookType;
  resourceType: string;
  actions: readonly EventActionDefinition[];
  data: EventData;
}

/** An event type an extension module declared (src/extensions/registry.ts). */
export interface DeclaredEventType {
  webhookType: WebhookType;
  resourceType: string;
  actions: readonly string[];
}

/** Extensions say nothing about their changes: any object, or null. */
const DECLARED_CHANGES: JsonSchema = {
  type: ['object', 'null'],
  description: 'Set by the module that publishes the event: an object of changed fields, or null.',
};

/**
 * Every (webhookType, resourceType) the service sends, in webhook type order: the built-in ones,
 * those extensions declared, then the test webhook, which every type carries.
 */
export function listEventTypes(
  webhookTypes: readonly WebhookType[],
  builtIn: readonly EventTypeDefinition[],
  declared: readonly DeclaredEventType[],
): EventTypeDefinition[] {
  return webhookTypes.flatMap((webhookType) => [
    ...builtIn.filter((entry) => entry.webhookType === webhookType),
    ...declared
      .filter((entry) => entry.webhookType === webhookType)
      .map((entry): EventTypeDefinition => ({
        webhookType,
        resourceType: entry.resourceType,
        actions: entry.actions.map((action) => ({ action, changes: DECLARED_CHANGES, when: 'published by an extension module' })),
        data: { kind: 'undescribed' },
      })),
    {
      webhookType,
      resourceType: 'WebhookTest',
      actions: [{ action: 'test', changes: null, when: 'POST …/webhook-config/test or POST …/webhook-endpoints/{endpointId}/test' }],
      data: { kind: 'none' },
    },
  ]);
}

const capitalize = (text: string) => `${text[0].toUpperCase()}${text.slice(1)}`;

/** The name of an entry's body schema: its OpenAPI component and its JSON Schema title. */
export function webhookBodyName(entry: Pick<EventTypeDefinition, 'webhookType' | 'resourceType'>): string {
  const what = entry.resourceType === 'WebhookTest' ? 'Test' : entry.resourceType;
  return `${capitalize(entry.webhookType)}${what}WebhookBody`;
}

const TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}\\+00:00$';
const NULL_CHANGES: JsonSchema = { type: 'null', description: 'Always null for this action.' };

/**
 * One action's `changes` when the entry has one, else every distinct one (an `allOf` of
 * if/then ties each to its action).
 */
function changesOf(actions: readonly EventActionDefinition[]): { schema: JsonSchema; perAction: JsonSchema[] } {
  const schemas = actions.map((a) => a.changes ?? NULL_CHANGES);
  const distinct = [...new Map(schemas.map((s) => [JSON.stringify(s), s])).values()];
  if (distinct.length === 1) return { schema: distinct[0], perAction: [] };
  const perAction = actions.map((a, i) => ({
    if: { properties: { action: { const: a.action } } },
    then: { properties: { changes: schemas[i] } },
  }));
  return { schema: { anyOf: distinct }, perAction };
}

function dataOf(entry: EventTypeDefinition): JsonSchema {
  const full = 'Only for endpoints that ask for full payloads';
  switch (entry.data.kind) {
    case 'resource':
      return { description: `${full}: the ${entry.resourceType} as ${entry.data.route} answers it.`, $ref: `${DEFS}${entry.data.schema}` };
    case 'none':
      return { type: 'null', description: `${full}: null, a test webhook has no resource.` };
    case 'undescribed':
      return { description: `${full}: the ${entry.resourceType} as the module that publishes it shows it.` };
  }
}

/** The body of one entry without its definitions: the envelope, `changes` per action and `data`. */
function envelope(entry: EventTypeDefinition): JsonSchema {
  const changes = changesOf(entry.actions);
  const fetch =
    entry.data.kind === 'resource'
      ? `Fetch the ${entry.resourceType} with ${entry.data.route}.`
      : entry.data.kind === 'none'
        ? 'A fresh id; there is nothing to fetch.'
        : `The id of the ${entry.resourceType}.`;
  const uuid = (description: string) => ({ type: 'string', format: 'uuid', description });
  return {
    title: webhookBodyName(entry),
    description:
      `${entry.webhookType} webhook about a ${entry.resourceType}: ${entry.actions.map((a) => `\`${a.action}\` (${a.when})`).join('; ')}. ` +
      'Keys arrive in this order.',
    type: 'object',
    required: [...ENVELOPE_KEYS],
    additionalProperties: false,
    properties: {
      organizationId: uuid('The organization the event belongs to.'),
      action: { type: 'string', enum: entry.actions.map((a) => a.action) },
      id: uuid('The webhook id: the same on every attempt and redelivery; deduplicate on it.'),
      resourceId: uuid(fetch),
      resourceType: { type: 'string', const: entry.resourceType },
      createdAtUtc: {
        type: 'string',
        pattern: TIMESTAMP,
        description: 'When the event happened (not when it was sent).',
        examples: ['2026-11-22T01:25:42.123456+00:00'],
      },
      changes: changes.schema,
      data: dataOf(entry),
    },
    ...(changes.perAction.length > 0 ? { allOf: changes.perAction } : {}),
  };
}

/** Every subschema of `schema` (itself included) mapped by `fn`, children first; data (enum, examples…) left alone. */
export function mapSubschemas(schema: unknown, fn: (schema: JsonSchema) => JsonSchema): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value as JsonSchema).map(([name, child]) => [name, mapSubschemas(child, fn)]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((child) => mapSubschemas(child, fn));
    } else if (SCHEMA_VALUES.has(key)) {
      out[key] = mapSubschemas(value, fn);
    } else {
      out[key] = value;
    }
  }
  return fn(out);
}

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_VALUES = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
]);

/** The same schema with every `$ref` starting with `from` starting with `to` instead. */
export function rewriteRefs<T>(schema: T, from: string, to: string): T {
  return mapSubschemas(schema, (s) =>
    typeof s.$ref === 'string' && s.$ref.startsWith(from) ? { ...s, $ref: `${to}${s.$ref.slice(from.length)}` } : s,
  ) as T;
}

/** The names of the definitions `schema` refers to, directly or through others; a ref to anything else is an error. */
export function referencedDefinitions(schema: JsonSchema, definitions: Readonly<Record<string, JsonSchema>>): string[] {
  const found = new Set<string>();
  const visit = (node: unknown) =>
    mapSubschemas(node, (s) => {
      if (s.$ref === undefined) return s;
      const ref = typeof s.$ref === 'string' ? s.$ref : JSON.stringify(s.$ref);
      const name = ref.startsWith(DEFS) ? ref.slice(DEFS.length) : '';
      if (!Object.prototype.hasOwnProperty.call(definitions, name)) throw new Error(`Unresolvable reference ${ref}`);
      if (!found.has(name)) {
        found.add(name);
        visit(definitions[name]);
      }
      return s;
    });
  visit(schema);
  return [...found].sort();
}

/**
 * A JSON Schema 2020-12 validator knows `examples` but not OpenAPI's single `example`, nor
 * OpenAPI's `discriminator` (a hint for code generators; the `oneOf` beside it decides), and a
 * strict one refuses a keyword it does not know.
 */
export function withJsonSchemaExamples(schema: JsonSchema): JsonSchema {
  return mapSubschemas(schema, (s) => {
    if (!('example' in s) && !('discriminator' in s)) return s;
    const { example, discriminator: _hint, ...rest } = s;
    return 'example' in s ? { ...rest, examples: [example] } : rest;
  }) as JsonSchema;
}

/**
 * The self-contained JSON Schema of one entry's body: its definitions are the named schemas of
 * `shared` (written with `#/$defs/` refs) and the OpenAPI component schemas (`#/components/schemas/`
 * refs), of which it copies only those it reaches.
 */
export function eventBodySchema(
  entry: EventTypeDefinition,
  components: Readonly<Record<string, JsonSchema>>,
  shared: Readonly<Record<string, JsonSchema>>,
): JsonSchema {
  const clash = Object.keys(shared).find((name) => name in components);
  if (clash) throw new Error(`${clash} is both a component schema and a catalogue definition`);
  const definitions: Record<string, JsonSchema> = { ...shared };
  for (const [name, schema] of Object.entries(components)) definitions[name] = rewriteRefs(schema, COMPONENTS, DEFS);
  const body = envelope(entry);
  const names = referencedDefinitions(body, definitions);
  return {
    $schema: JSON_SCHEMA_DIALECT,
    ...body,
    ...(names.length > 0 ? { $defs: Object.fromEntries(names.map((name) => [name, definitions[name]])) } : {}),
  };
}

/**
 * An entry's body for the OpenAPI document: the schema without dialect and definitions, its refs
 * pointing at component schemas, and the definitions that are no component yet.
 */
export function openApiWebhookBody(
  entry: EventTypeDefinition,
  components: Readonly<Record<string, JsonSchema>>,
  shared: Readonly<Record<string, JsonSchema>>,
): { body: JsonSchema; newComponents: Record<string, JsonSchema> } {
  const { $schema: _dialect, $defs, ...body } = eventBodySchema(entry, components, shared);
  const definitions = Object.entries(($defs ?? {}) as Record<string, JsonSchema>).filter(([name]) => !(name in components));
  return {
    body: rewriteRefs(body, DEFS, COMPONENTS),
    newComponents: Object.fromEntries(definitions.map(([name, schema]) => [name, rewriteRefs(schema, DEFS, COMPONENTS)])),
  };
}
