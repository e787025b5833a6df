import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
    expect(Object.keys(doc.webhooks).sort()).toEqual(['custodialAccount', 'document', 'kyc', 'nft', 'payment', 'transaction']);
    const resolve = (schema: { $ref: string }) => doc.components.schemas[schema.$ref.split('/').pop() as string];
    const bodies = (type: string) => {
      const schema = doc.webhooks[type].post.requestBody.content['application/json'].schema;
      return (schema.oneOf ?? [schema]).map(resolve);
    };
    const variants = (type: string) => bodies(type).map((b: any) => `${b.properties.resourceType.const}/${b.properties.action.const}`);
    expect(variants('custodialAccount')).toEqual(['Wallet/create', 'WebhookTest/test']);
    expect(variants('nft')).toEqual(['Token/create', 'Token/update', 'WebhookTest/test']);
    expect(variants('transaction')).toEqual(['Transaction/create', 'WebhookTest/test']);
    expect(variants('payment')).toEqual(['WebhookTest/test']);
    const tokenUpdate = bodies('nft')[1];
    expect(Object.keys(tokenUpdate.properties)).toEqual([
      'organizationId',
      'action',
      'id',
      'resourceId',
      'resourceType',
      'createdAtUtc',
      'changes',
    ]);
    expect(resolve(tokenUpdate.properties.changes).properties).toEqual(
      expect.objectContaining({ name: expect.any(Object), image: expect.any(Object) }),
    );
    expect(bodies('nft')[0].properties.changes.type).toBe('null');

    for (const type of Object.keys(doc.webhooks)) {
      const operation = doc.webhooks[type].post;
      expect(operation.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name)).toEqual(
        expect.arrayContaining([
          'x-service-webhook-hmac',
          'x-service-webhook-hmac-previous',
          'x-service-webhook-id',
          'x-service-webhook-attempt',
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
