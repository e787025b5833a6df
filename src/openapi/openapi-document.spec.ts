import type { OpenAPIObject } from '@nestjs/swagger';
import { toOpenApi31Nullability } from '../common/openapi-nullability';
import { completeOpenApiDocument, operationIdProblems } from './openapi-document';
import { describeProblemAnswers, problemCodesFor } from './problem-examples';
import { formatDelay } from './webhooks-openapi';

describe('toOpenApi31Nullability', () => {
  it('turns nullable types into type arrays and adds null to enums', () => {
    expect(toOpenApi31Nullability({ type: 'string', nullable: true, maxLength: 3 })).toEqual({ type: ['string', 'null'], maxLength: 3 });
    expect(toOpenApi31Nullability({ type: 'string', enum: ['a', 'b'], nullable: true })).toEqual({
      type: ['string', 'null'],
      enum: ['a', 'b', null],
    });
    expect(toOpenApi31Nullability({ type: 'integer', nullable: false })).toEqual({ type: 'integer' });
  });

  it('wraps nullable references and compositions in anyOf with null, keeping annotations outside', () => {
    expect(toOpenApi31Nullability({ $ref: '#/components/schemas/X', nullable: true, description: 'd' })).toEqual({
      description: 'd',
      anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'null' }],
    });
    expect(toOpenApi31Nullability({ allOf: [{ $ref: '#/x' }], nullable: true })).toEqual({
      anyOf: [{ allOf: [{ $ref: '#/x' }] }, { type: 'null' }],
    });
  });

  it('reaches nested schemas and leaves other values alone', () => {
    const input = {
      properties: {
        a: { type: 'array', items: { type: 'string', nullable: true } },
        b: { type: 'boolean' },
        nullable: { type: 'boolean' },
      },
      example: [null],
    };
    expect(toOpenApi31Nullability(input)).toEqual({
      properties: { a: { type: 'array', items: { type: ['string', 'null'] } }, b: { type: 'boolean' }, nullable: { type: 'boolean' } },
      example: [null],
    });
  });
});

describe('completeOpenApiDocument', () => {
  const scanned = (): OpenAPIObject => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/health/live': { get: { responses: { '200': { description: 'ok' } } } },
      '/v1/x': { get: { security: [{ apiKey: [] }], responses: { '200': { description: 'ok' } } } },
    },
    components: { schemas: { TokenMetadataRequestDto: { type: 'object', properties: { name: { type: 'string', nullable: true } } } } },
  });
  const config = { webhook: { retryScheduleMs: [200, 1000, 120_000], timeoutMs: 3000 } } as never;

  it('adds a server, a licence, explicit public security, and no nullable anywhere', () => {
    const document = completeOpenApiDocument(scanned(), config);
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(document.info.license).toEqual(expect.objectContaining({ name: expect.any(String) }));
    expect(document.paths['/health/live'].get?.security).toEqual([]);
    expect(document.paths['/v1/x'].get?.security).toEqual([{ apiKey: [] }]);
    expect(JSON.stringify(document)).not.toContain('"nullable"');
  });

  it('describes one webhook per type with its bodies, headers and the retry schedule', () => {
    const document = completeOpenApiDocument(scanned(), config);
    const webhooks = (document as unknown as { webhooks: Record<string, { post: Record<string, any> }> }).webhooks;
    expect(Object.keys(webhooks)).toEqual(['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount', 'operational']);
    const nft = webhooks.nft.post;
    expect(nft.requestBody.content['application/json'].schema.oneOf.map((s: { $ref: string }) => s.$ref)).toEqual([
      '#/components/schemas/NftTokenWebhookBody',
      '#/components/schemas/NftTestWebhookBody',
    ]);
    expect(webhooks.operational.post.requestBody.content['application/json'].schema.oneOf.map((s: { $ref: string }) => s.$ref)).toEqual([
      '#/components/schemas/OperationalWebhookEndpointWebhookBody',
      '#/components/schemas/OperationalWebhookWebhookBody',
      '#/components/schemas/OperationalTestWebhookBody',
    ]);
    const schemas = document.components!.schemas as Record<string, any>;
    const token = schemas.NftTokenWebhookBody;
    expect(Object.keys(token.properties)).toEqual([
      'organizationId',
      'action',
      'id',
      'resourceId',
      'resourceType',
      'createdAtUtc',
      'changes',
      'data',
    ]);
    expect(token.required).not.toContain('data');
    expect(token.properties.action).toEqual({ type: 'string', enum: ['create', 'update'] });
    expect(token.properties.data.$ref).toBe('#/components/schemas/TokenDto');
    expect(token.properties.changes.anyOf[1]).toEqual({ $ref: '#/components/schemas/TokenUpdateChanges' });
    // The changes of a token update are its metadata fields, spam and media, each as the token shows it.
    expect(Object.keys(schemas.TokenUpdateChanges.properties)).toEqual(expect.arrayContaining(['name', 'editionId', 'spam', 'media']));
    expect(schemas.TokenUpdateChanges.properties.name).toEqual(schemas.TokenMetadataDto.properties.name);
    // GET answers no route of the document declares are added, for `data` to refer to.
    expect(schemas.WalletDto.required).toContain('createdAtUtc');
    expect(schemas.WebhookDetailDto.properties.payload).toEqual({ type: 'object', additionalProperties: true });
    expect(nft.parameters.map((p: { name: string }) => p.name)).toEqual([
      'user-agent',
      'x-service-webhook-id',
      'x-service-webhook-event-id',
      'x-service-webhook-attempt',
      'x-service-webhook-sequence',
      'x-service-webhook-hmac',
      'x-service-webhook-hmac-previous',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'authorization',
    ]);
    expect(nft.description).toContain('200ms, 1s, 2m (4 attempts');
    expect(nft.description).toContain('whsec_');
  });

  it('writes delays the way the configuration takes them', () => {
    expect([200, 1000, 30_000, 120_000, 3_600_000, 86_400_000, 1500].map(formatDelay)).toEqual([
      '200ms',
      '1s',
      '30s',
      '2m',
      '1h',
      '1d',
      '1500ms',
    ]);
  });
});

describe('problem answers', () => {
  it('name the catalogue codes of their status: those the description names, else every one of the status', () => {
    expect(problemCodesFor(404, 'TOKEN_NOT_FOUND or WALLET_NOT_FOUND.')).toEqual(['TOKEN_NOT_FOUND', 'WALLET_NOT_FOUND']);
    expect(problemCodesFor(503, 'PostgreSQL or Redis is unreachable (problem details).')).toEqual(['SERVICE_UNAVAILABLE', 'NOT_READY']);
  });

  it('get a problem+json body with one example per code', () => {
    const document = {
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: { '/x': { get: { responses: { '200': { description: 'ok' }, '422': { description: 'CHAIN_MANAGED: on chain.' } } } } },
    } as unknown as OpenAPIObject;
    describeProblemAnswers(document);
    const responses = document.paths['/x'].get?.responses as Record<
      string,
      { content?: Record<string, { examples: Record<string, { value: unknown }> }> }
    >;
    expect(responses['200'].content).toBeUndefined();
    expect(responses['422'].content?.['application/problem+json'].examples.CHAIN_MANAGED.value).toEqual(
      expect.objectContaining({ status: 422, code: 'CHAIN_MANAGED', title: 'Unprocessable Entity', type: '/problems/chain-managed' }),
    );
  });
});

describe('error answers from the catalogue', () => {
  const document = (paths: Record<string, unknown>) =>
    ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths, components: { schemas: {} } }) as unknown as OpenAPIObject;
  const answers = (doc: OpenAPIObject, path: string, method: 'get' | 'post') => {
    const responses = doc.paths[path][method]?.responses as Record<string, any>;
    return Object.fromEntries(
      Object.entries(responses)
        .filter(([status]) => Number(status) >= 400)
        .map(([status, r]) => [status, Object.keys(r.content['application/problem+json'].examples)]),
    );
  };

  it('list every status a guarded operation with a path id, a page key and a body can answer', () => {
    const doc = document({
      '/v1/wallets/{walletId}/things': {
        post: {
          security: [{ apiKey: [] }],
          parameters: [
            { name: 'walletId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
            { name: 'pageKey', in: 'query', required: false, schema: { type: 'string' } },
          ],
          requestBody: {
            content: { 'application/json': { schema: { type: 'object', properties: { a: { pattern: '^0x[0-9a-fA-F]{40}$' } } } } },
          },
          responses: { '201': { description: 'ok' }, '422': { description: 'CHAIN_MANAGED: on chain.' } },
        },
      },
    });
    describeProblemAnswers(doc);
    expect(answers(doc, '/v1/wallets/{walletId}/things', 'post')).toEqual({
      '400': [
        'VALIDATION_FAILED',
        'INVALID_ADDRESS',
        'INVALID_PAGE_KEY',
        'INVALID_PATH_PARAMETER',
        'MALFORMED_JSON',
        'JSON_TOO_DEEP',
        'INVALID_CHARACTER',
        'BAD_REQUEST',
      ],
      '401': ['UNAUTHENTICATED', 'INVALID_API_KEY'],
      '403': ['FORBIDDEN'],
      '404': ['WALLET_NOT_FOUND'],
      '413': ['PAYLOAD_TOO_LARGE'],
      '415': ['UNSUPPORTED_MEDIA_TYPE'],
      '422': ['CHAIN_MANAGED'],
      '429': ['RATE_LIMITED'],
      '500': ['INTERNAL_ERROR'],
      '503': ['SERVICE_UNAVAILABLE'],
    });
    const responses = doc.paths['/v1/wallets/{walletId}/things'].post?.responses as Record<string, any>;
    expect(Object.keys(responses['429'].headers)).toEqual(['Retry-After']);
    expect(Object.keys(responses['503'].headers)).toEqual(['Retry-After']);
    expect(Object.keys(responses['401'].headers)).toEqual(['WWW-Authenticate']);
  });

  it('leave the rate limit off the operations it skips, and guards off public ones', () => {
    const doc = document({ '/health/live': { get: { security: [], responses: { '200': { description: 'ok' } } } } });
    describeProblemAnswers(doc, () => ({ rateLimited: false }));
    expect(answers(doc, '/health/live', 'get')).toEqual({ '500': ['INTERNAL_ERROR'] });
  });

  it('refuse a path id that no not-found code documents', () => {
    const doc = document({
      '/v1/gadgets/{gadgetId}': {
        get: { parameters: [{ name: 'gadgetId', in: 'path', required: true, schema: { type: 'string' } }], responses: {} },
      },
    });
    expect(() => describeProblemAnswers(doc)).toThrow('GET /v1/gadgets/{gadgetId}: no error code is documented on path:gadgetId.');
  });
});

describe('toOpenApi31Nullability on Nest nullable references', () => {
  it('turns the type object Nest writes beside one allOf member, which would refuse the null, into that member or null', () => {
    expect(
      toOpenApi31Nullability({ type: 'object', nullable: true, description: 'd', allOf: [{ $ref: '#/components/schemas/X' }] }),
    ).toEqual({ description: 'd', anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'null' }] });
  });
});

describe('operationIdProblems', () => {
  const doc = (ids: (string | undefined)[]) =>
    ({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: Object.fromEntries(ids.map((operationId, i) => [`/p${i}`, { get: { operationId, tags: ['T'], responses: {} } }])),
    }) as unknown as OpenAPIObject;

  it('accepts unique camelCase ids', () => {
    expect(operationIdProblems(doc(['listWallets', 'getNftBalances']))).toEqual([]);
  });

  it('names Nest default ids, duplicates and missing ones', () => {
    expect(operationIdProblems(doc(['WalletsController_create', 'listWallets', 'listWallets', undefined]))).toEqual([
      'GET /p0: operationId WalletsController_create is not camelCase',
      "GET /p2: operationId listWallets is also GET /p1's",
      'GET /p3: no operationId',
    ]);
  });
});
