import {
  eventBodySchema,
  listEventTypes,
  openApiWebhookBody,
  referencedDefinitions,
  rewriteRefs,
  webhookBodyName,
  withJsonSchemaExamples,
  type EventTypeDefinition,
} from './event-schema.rules';

const gadget: EventTypeDefinition = {
  webhookType: 'nft',
  resourceType: 'Gadget',
  actions: [
    { action: 'create', changes: null, when: 'POST /v1/gadgets' },
    { action: 'update', changes: { $ref: '#/$defs/GadgetChanges' }, when: 'PATCH /v1/gadgets/{id}' },
  ],
  data: { kind: 'resource', schema: 'GadgetDto', route: 'GET /v1/gadgets/{id}' },
};

const components = {
  GadgetDto: { type: 'object', properties: { part: { $ref: '#/components/schemas/PartDto' } } },
  PartDto: { type: 'object', properties: { size: { type: 'integer', example: 3 } } },
  UnusedDto: { type: 'object' },
};
const shared = { GadgetChanges: { type: 'object', properties: { part: { $ref: '#/$defs/PartDto' } } } };

/** Every `$ref` in a schema, wherever it is. */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => (key === '$ref' ? [String(child)] : refsIn(child)));
}

describe('listEventTypes', () => {
  it('lists the built-in entries, then the declared ones, then the test webhook, under every type in order', () => {
    const entries = listEventTypes(
      ['nft', 'payment'],
      [gadget],
      [{ webhookType: 'payment', resourceType: 'Payment', actions: ['create'] }],
    );
    expect(entries.map((e) => [e.webhookType, e.resourceType, e.actions.map((a) => a.action)])).toEqual([
      ['nft', 'Gadget', ['create', 'update']],
      ['nft', 'WebhookTest', ['test']],
      ['payment', 'Payment', ['create']],
      ['payment', 'WebhookTest', ['test']],
    ]);
    expect(entries[1].data).toEqual({ kind: 'none' });
    expect(entries[2].data).toEqual({ kind: 'undescribed' });
  });

  it('names bodies by type and resource', () => {
    expect(webhookBodyName(gadget)).toBe('NftGadgetWebhookBody');
    expect(webhookBodyName({ webhookType: 'custodialAccount', resourceType: 'WebhookTest' })).toBe('CustodialAccountTestWebhookBody');
  });
});

describe('eventBodySchema', () => {
  const schema = eventBodySchema(gadget, components, shared);

  it('is a 2020-12 schema of the seven keys in order, a closed envelope with an optional data', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.required).toEqual(['organizationId', 'action', 'id', 'resourceId', 'resourceType', 'createdAtUtc', 'changes']);
    expect(Object.keys(schema.properties as object)).toEqual([...(schema.required as string[]), 'data']);
    expect(schema.additionalProperties).toBe(false);
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    expect(properties.action).toEqual({ type: 'string', enum: ['create', 'update'] });
    expect(properties.resourceType).toEqual({ type: 'string', const: 'Gadget' });
    expect(properties.data.$ref).toBe('#/$defs/GadgetDto');
  });

  it('ties each action to its changes', () => {
    expect(schema.allOf).toEqual([
      {
        if: { properties: { action: { const: 'create' } } },
        then: { properties: { changes: { type: 'null', description: expect.any(String) } } },
      },
      { if: { properties: { action: { const: 'update' } } }, then: { properties: { changes: { $ref: '#/$defs/GadgetChanges' } } } },
    ]);
  });

  it('copies exactly the definitions it reaches, and no reference leaves the schema', () => {
    expect(Object.keys(schema.$defs as object)).toEqual(['GadgetChanges', 'GadgetDto', 'PartDto']);
    const refs = refsIn(schema);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(Object.keys(schema.$defs as object)).toContain(ref.replace('#/$defs/', ''));
  });

  it('has no data definition for a test webhook, and nothing to copy', () => {
    const [test] = listEventTypes(['kyc'], [], []);
    const body = eventBodySchema(test, components, shared);
    expect((body.properties as Record<string, unknown>).data).toEqual({ type: 'null', description: expect.any(String) });
    expect(body.$defs).toBeUndefined();
    expect(body.allOf).toBeUndefined();
  });

  it('refuses a reference it cannot resolve inside the schema, and a name used twice', () => {
    expect(() =>
      eventBodySchema({ ...gadget, data: { kind: 'resource', schema: 'Missing', route: 'GET /x' } }, components, shared),
    ).toThrow('Unresolvable reference #/$defs/Missing');
    expect(() => referencedDefinitions({ $ref: 'https://example.com/x.json' }, {})).toThrow('Unresolvable reference');
    expect(() => eventBodySchema(gadget, components, { ...shared, PartDto: {} })).toThrow('PartDto is both');
  });
});

describe('schema rewriting', () => {
  it('moves references and examples only where they are keywords', () => {
    const schema = {
      properties: { example: { type: 'string', example: 'x' }, $ref: { type: 'string' } },
      items: { $ref: '#/components/schemas/A' },
      examples: [{ $ref: 'data, not a reference' }],
    };
    expect(rewriteRefs(schema, '#/components/schemas/', '#/$defs/')).toEqual({ ...schema, items: { $ref: '#/$defs/A' } });
    expect(withJsonSchemaExamples(schema)).toEqual({
      ...schema,
      properties: { ...schema.properties, example: { type: 'string', examples: ['x'] } },
    });
  });

  it('gives the OpenAPI document the body with component references and the definitions it lacks', () => {
    const { body, newComponents } = openApiWebhookBody(gadget, components, shared);
    expect(body.$schema).toBeUndefined();
    expect(body.$defs).toBeUndefined();
    expect(body.title).toBe('NftGadgetWebhookBody');
    expect([...new Set(refsIn(body))].sort()).toEqual(['#/components/schemas/GadgetChanges', '#/components/schemas/GadgetDto']);
    expect(newComponents).toEqual({ GadgetChanges: { type: 'object', properties: { part: { $ref: '#/components/schemas/PartDto' } } } });
  });
});
