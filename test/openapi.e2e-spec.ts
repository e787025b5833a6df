import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CORE_ERROR_CODES, ERROR_CATALOGUE, NOT_PER_OPERATION } from '../src/common/errors/error-catalogue';
import type { WebhookType } from '../src/common/webhook-types';
import { rewriteRefs, webhookBodyName, withJsonSchemaExamples } from '../src/modules/event-types/event-schema.rules';
import { operationIdProblems } from '../src/openapi/openapi-document';
import { bearer, createOrganization } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: Record<string, any>;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '5s,30s,2m' });
    doc = (await t.http().get('/docs-json').expect(200)).body;
  });
  afterAll(async () => {
    await t.close();
  });

  it('is OpenAPI 3.1 without 3.0-only keywords, with a server and a licence', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(JSON.stringify(doc)).not.toMatch(/"nullable":/);
    expect(doc.servers).toEqual([expect.objectContaining({ url: expect.any(String) })]);
    expect(doc.info.license).toEqual(expect.objectContaining({ name: expect.any(String) }));
    for (const path of ['/health/live', '/health/ready']) {
      expect(doc.paths[path].get.summary).toEqual(expect.any(String));
      expect(doc.paths[path].get.security).toEqual([]);
    }
  });

  it('describes every webhook: a body schema per type, every header, verification and the retry schedule', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      'custodialAccount',
      'document',
      'kyc',
      'nft',
      'operational',
      'payment',
      'transaction',
    ]);
    const resolve = (schema: { $ref: string }) => doc.components.schemas[schema.$ref.split('/').pop() as string];
    const bodies = (type: string) => {
      const schema = doc.webhooks[type].post.requestBody.content['application/json'].schema;
      return (schema.oneOf ?? [schema]).map(resolve);
    };
    const variants = (type: string) =>
      bodies(type).map((b: any) => `${b.properties.resourceType.const}/${b.properties.action.enum.join(',')}`);
    expect(variants('custodialAccount')).toEqual(['Wallet/create', 'WebhookTest/test']);
    expect(variants('nft')).toEqual(['Token/create,update', 'WebhookTest/test']);
    expect(variants('transaction')).toEqual(['Transaction/create,update', 'WebhookTest/test']);
    expect(variants('operational')).toEqual([
      'WebhookEndpoint/disabled,enabled,failing,recovered',
      'Webhook/exhausted',
      'WebhookTest/test',
    ]);
    expect(variants('payment')).toEqual(['WebhookTest/test']);
    const token = bodies('nft')[0];
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
    expect(token.properties.data.$ref).toBe('#/components/schemas/TokenDto');
    const tokenChanges = resolve(token.properties.changes.anyOf.find((s: any) => s.$ref));
    expect(Object.keys(tokenChanges.properties)).toEqual(expect.arrayContaining(['name', 'image', 'spam', 'media']));
    expect(bodies('transaction')[0].properties.changes.anyOf).toEqual([
      expect.objectContaining({ type: 'null' }),
      { $ref: '#/components/schemas/TransactionUpdateChanges' },
    ]);
    expect(bodies('custodialAccount')[0].properties.changes.type).toBe('null');

    for (const type of Object.keys(doc.webhooks)) {
      const operation = doc.webhooks[type].post;
      expect(operation.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name)).toEqual(
        expect.arrayContaining([
          'x-service-webhook-hmac',
          'x-service-webhook-hmac-previous',
          'x-service-webhook-id',
          'x-service-webhook-attempt',
          'x-service-webhook-sequence',
          'user-agent',
          'webhook-id',
          'webhook-timestamp',
          'webhook-signature',
        ]),
      );
      expect(operation.description).toContain('whsec_');
      expect(operation.description).toContain('{webhook-id}.{webhook-timestamp}.{body}');
      // This deployment's schedule, and the default.
      expect(operation.description).toContain('5s, 30s, 2m (4 attempts');
      expect(operation.description).toContain('5s, 30s, 2m, 10m, 30m, 1h, 3h, 6h, 12h, 24h');
    }
  });

  it('documents the rotation endpoint and the expiry of the previous secret', () => {
    const rotate = doc.paths['/api/organization/v1/current-organization/webhook-config/rotate-secret'].post;
    expect(rotate.security).toEqual([{ apiKey: [] }]);
    expect(rotate.summary).toEqual(expect.any(String));
    expect(doc.components.schemas.WebhookConfigDto.properties.previousSecretExpiresAtUtc.type).toEqual(['string', 'null']);
    expect(Object.keys(doc.components.schemas.RotateSecretDto.properties).sort()).toEqual(['previousSecretValidSeconds', 'sharedSecret']);
  });

  it('gives every error answer problem examples whose codes the catalogue lists with that status', () => {
    let answers = 0;
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries((operation?.responses ?? {}) as Record<string, any>)) {
          if (Number(status) < 400) continue;
          answers += 1;
          const examples = response.content['application/problem+json'].examples as Record<
            string,
            { value: { code: string; status: number } }
          >;
          expect(Object.keys(examples).length).toBeGreaterThan(0);
          for (const [code, example] of Object.entries(examples)) {
            expect([code, example.value.status]).toEqual([code, ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE]?.status]);
          }
          // A code the description names is one of the examples: no answer names a code of another status.
          for (const word of String(response.description).match(/\b[A-Z][A-Z_]{3,}[A-Z]\b/g) ?? []) {
            if (word in ERROR_CATALOGUE) expect([status, word, word in examples]).toEqual([status, word, true]);
          }
        }
      }
    }
    expect(answers).toBeGreaterThan(20);
    expect(doc.paths['/v1/transactions/batch'].post.responses['404'].content['application/problem+json'].examples).toEqual({
      TOKEN_NOT_FOUND: expect.any(Object),
      WALLET_NOT_FOUND: expect.any(Object),
    });
  });

  it('lists every error status an operation can answer: its inputs, path ids, credential, rate limit', () => {
    const listed = new Set<string>();
    let operations = 0;
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
        operations += 1;
        const responses = operation.responses as Record<string, any>;
        const where = `${method.toUpperCase()} ${path}`;
        for (const [status, response] of Object.entries<Record<string, any>>(responses)) {
          for (const code of Object.keys(response.content?.['application/problem+json']?.examples ?? {})) listed.add(code);
          if (status === '429' || status === '503')
            expect([where, status, response.headers?.['Retry-After']?.required]).toEqual([where, status, true]);
        }
        const statuses = Object.keys(responses);
        expect([where, statuses]).toEqual([where, expect.arrayContaining(['500'])]);
        if (operation.security.length > 0) {
          const guard = operation.security[0].apiKey ? ['401', '403'] : ['401', '404'];
          expect([where, statuses]).toEqual([where, expect.arrayContaining([...guard, '429', '503'])]);
        }
        if ((operation.parameters ?? []).length > 0 || operation.requestBody)
          expect([where, statuses]).toEqual([where, expect.arrayContaining(['400'])]);
        if ((operation.parameters ?? []).some((p: any) => p.in === 'path'))
          expect([where, statuses]).toEqual([where, expect.arrayContaining(['404'])]);
      }
    }
    expect(operations).toBeGreaterThan(40);
    // A new code appears beside the operations that can answer with it, or says here why it does not.
    expect(CORE_ERROR_CODES.filter((code) => !listed.has(code) && !(code in NOT_PER_OPERATION))).toEqual([]);
    expect(Object.keys(NOT_PER_OPERATION).filter((code) => listed.has(code))).toEqual([]);
    expect(doc.paths['/api/organization/v1/current-organization/webhooks/{webhookId}'].get.responses['404']).toEqual(
      expect.objectContaining({
        content: { 'application/problem+json': expect.objectContaining({ examples: { WEBHOOK_NOT_FOUND: expect.any(Object) } }) },
      }),
    );
  });

  it('gives every operation a unique camelCase operationId and a tag, for SDK generators', () => {
    expect(operationIdProblems(doc as never)).toEqual([]);
    expect(doc.paths['/v1/wallets'].get.operationId).toBe('listWallets');
    expect(doc.paths['/v2/wallets/{walletId}/nft-balances'].get.operationId).toBe('getNftBalances');
    expect(doc.paths['/api/organization/v1/current-organization/webhook-endpoints'].post.operationId).toBe('createWebhookEndpoint');
    expect(JSON.stringify(doc)).not.toMatch(/Controller_/);
  });

  it("opens on a short introduction and the integrator's tags: Wallets and Tokens first, the probes last, no portal files", async () => {
    const intro = doc.info.description as string;
    expect(intro.length).toBeLessThan(700);
    expect(intro).not.toContain('Verifying a webhook');
    const tags = (doc.tags as { name: string; description?: string }[]).map((tag) => tag.name);
    expect(tags.slice(0, 2)).toEqual(['Wallets', 'Tokens']);
    expect(tags[tags.length - 1]).toBe('Operations');
    expect(tags).not.toContain('Portal');
    // Every tag an operation uses is listed, in that order.
    const used = new Set(Object.values(doc.paths).flatMap((item: any) => Object.values(item).flatMap((op: any) => op.tags ?? [])));
    expect(new Set(tags)).toEqual(used);
    // Which types the service sends, and what the others are for.
    expect(doc.tags.find((tag: { name: string }) => tag.name === 'Webhooks').description).toContain(
      "The service itself sends `transaction`, `nft`, `custodialAccount`, `operational`; `payment`, `kyc`, `document` are reserved for the integrator's own platform",
    );
    for (const type of ['payment', 'kyc', 'document']) {
      expect(doc.webhooks[type].post.description).toContain("reserved for the integrator's own platform");
    }
    // The webhook prose stays with its tag, after the API's own.
    expect(doc.tags.find((tag: { name: string }) => tag.name === 'Webhooks').description).toContain('Verifying a webhook');
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/portal'))).toEqual([]);
    // Out of the document, the portal is as public as before.
    expect((await t.http().get('/portal').expect(200)).text).toContain('<html');
    await t.http().get('/portal/portal.js').expect(200);
  });

  it('gives each webhook body the schema GET /v1/event-types serves, its data the schema of the GET answer', async () => {
    const org = await createOrganization(t);
    const catalogue = (await t.http().get('/v1/event-types').set(bearer(org.adminKey)).expect(200)).body.eventTypes as {
      webhookType: WebhookType;
      resourceType: string;
      schema: Record<string, any>;
    }[];
    // The served schemas are self-contained (#/$defs/…) and use JSON Schema's `examples` for OpenAPI's `example`.
    const asServed = (schema: unknown) =>
      withJsonSchemaExamples(rewriteRefs(schema as Record<string, unknown>, '#/components/schemas/', '#/$defs/'));
    for (const entry of catalogue) {
      const { $schema: _dialect, $defs, ...body } = entry.schema;
      const name = webhookBodyName(entry);
      expect([name, asServed(doc.components.schemas[name])]).toEqual([name, body]);
      for (const [definition, schema] of Object.entries($defs ?? {})) {
        expect([name, definition, asServed(doc.components.schemas[definition])]).toEqual([name, definition, schema]);
      }
    }
    const wallet = catalogue.find((e) => e.resourceType === 'Wallet')!;
    expect(wallet.schema.properties.data.$ref).toBe('#/$defs/WalletDto');
    const walletAnswer = doc.paths['/v1/wallets/{walletId}'].get.responses['200'].content['application/json'].schema;
    expect(walletAnswer).toEqual({ $ref: '#/components/schemas/WalletDto' });
  });

  it('passes Redocly lint without errors, and Swagger UI serves it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-e2e-'));
    try {
      const path = join(dir, 'openapi.json');
      writeFileSync(path, JSON.stringify(doc));
      // A non-zero exit (any error) rejects with Redocly's report.
      const { stdout, stderr } = await run(
        process.execPath,
        [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--format=stylish', path],
        {
          timeout: 60_000,
        },
      );
      expect(`${stdout}${stderr}`).toMatch(/valid/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const ui = await t.http().get('/docs/').expect(200);
    expect(ui.text).toContain('swagger-ui');
    const init = await t.http().get('/docs/swagger-ui-init.js').expect(200);
    // The UI loads this same document, webhooks included.
    expect(init.text).toContain('"webhooks"');
  });
});
