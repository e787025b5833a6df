import { MikroORM } from '@mikro-orm/core';
import { FORBIDDEN_TARGET_MESSAGE } from '../src/common/net/url-policy';
import { DeliveryTargetReader } from '../src/modules/webhook-endpoints/delivery-target.reader';
import { bearer, createApiKey, expectProblem } from './support/factories';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

const PATH = '/api/organization/v1/current-organization/webhook-config';
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const DEFAULTS = { url: null, enabled: false, webhookTypes: [], hasSharedSecret: false, previousSecretExpiresAtUtc: null };
const UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

interface Org {
  id: string;
  createdAtUtc: string;
  admin: { id: string; key: string; keyPrefix: string };
}

let counter = 0;
/** A unique, recognisable secret, so a test can search every output for it. */
const secretFor = (label: string) => `whsec-${label}-${Date.now()}-${(counter += 1)}-Zq9`;

async function newOrganization(t: TestApp): Promise<Org> {
  counter += 1;
  const created = await t
    .http()
    .post('/admin/v1/organizations')
    .set(bearer(OPERATOR_KEY))
    .send({ name: `Webhook config org ${counter}` })
    .expect(201);
  const admin = await createApiKey(t, created.body.id, ['admin']);
  return { id: created.body.id, createdAtUtc: created.body.createdAtUtc, admin };
}

const getConfig = (t: TestApp, org: Org) => t.http().get(PATH).set(bearer(org.admin.key));
const patchConfig = (t: TestApp, org: Org, body: unknown) =>
  t
    .http()
    .patch(PATH)
    .set(bearer(org.admin.key))
    .send(body as object);

async function auditEntries(t: TestApp, org: Org) {
  const res = await t.http().get(AUDIT_PATH).set(bearer(org.admin.key)).query({ pageSize: 1000 }).expect(200);
  return res.body.entries.filter((e: { action: string }) => e.action === 'webhookConfig.update') as Array<{
    action: string;
    apiKeyId: string | null;
    keyPrefix: string | null;
    requestId: string | null;
    changes: Record<string, { from: unknown; to: unknown }>;
  }>;
}

async function storedRows(t: TestApp, organizationId: string) {
  const connection = t.app.get(MikroORM).em.fork().getConnection();
  return connection.execute<Array<{ url: string | null; enabled: boolean; shared_secret_sealed: string | null }>>(
    'select url, enabled, shared_secret_sealed from webhook_endpoint where id = ?',
    [organizationId],
  );
}

/** Every field errors[] names, for asserting which field a 400 is about. */
const fieldsOf = (res: { body: { errors?: Array<{ field: string }> } }) => (res.body.errors ?? []).map((e) => e.field);

describe('webhook configuration', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('reading and changing it', () => {
    it('starts disabled with nothing configured, last updated when the organization was created', async () => {
      const org = await newOrganization(t);
      const res = await getConfig(t, org).expect(200);
      expect(res.body).toEqual({ ...DEFAULTS, updatedAtUtc: org.createdAtUtc });
      expect(res.body.updatedAtUtc).toMatch(UTC);
    });

    it('treats an empty PATCH as a no-op that answers the current configuration', async () => {
      const org = await newOrganization(t);
      const patched = await patchConfig(t, org, {}).expect(200);
      expect(patched.body).toEqual({ ...DEFAULTS, updatedAtUtc: org.createdAtUtc });
      const bodiless = await t.http().patch(PATH).set(bearer(org.admin.key)).expect(200);
      expect(bodiless.body).toEqual(patched.body);
      expect((await getConfig(t, org).expect(200)).body).toEqual(patched.body);
      expect(await auditEntries(t, org)).toEqual([]);
    });

    it('sets every field at once and answers the GET shape, never the secret', async () => {
      const org = await newOrganization(t);
      const secret = secretFor('all');
      const res = await patchConfig(t, org, {
        url: 'http://127.0.0.1:9999/hooks',
        enabled: true,
        sharedSecret: secret,
        webhookTypes: ['nft', 'transaction'],
      }).expect(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'enabled',
        'hasSharedSecret',
        'previousSecretExpiresAtUtc',
        'updatedAtUtc',
        'url',
        'webhookTypes',
      ]);
      expect(res.body).toEqual({
        url: 'http://127.0.0.1:9999/hooks',
        enabled: true,
        // Stored as a set, in catalogue order.
        webhookTypes: ['transaction', 'nft'],
        hasSharedSecret: true,
        previousSecretExpiresAtUtc: null,
        updatedAtUtc: expect.stringMatching(UTC),
      });
      expect(res.body.updatedAtUtc > org.createdAtUtc).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain(secret);
      expect((await getConfig(t, org).expect(200)).body).toEqual(res.body);
    });

    it('keeps the fields a partial PATCH leaves out', async () => {
      const org = await newOrganization(t);
      await patchConfig(t, org, { url: 'http://localhost:8080/a' }).expect(200);
      let res = await patchConfig(t, org, { webhookTypes: ['custodialAccount', 'payment'] }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          url: 'http://localhost:8080/a',
          enabled: false,
          webhookTypes: ['payment', 'custodialAccount'],
          hasSharedSecret: false,
        }),
      );
      res = await patchConfig(t, org, { sharedSecret: secretFor('partial') }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          url: 'http://localhost:8080/a',
          enabled: false,
          webhookTypes: ['payment', 'custodialAccount'],
          hasSharedSecret: true,
        }),
      );
      res = await patchConfig(t, org, { enabled: true }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          url: 'http://localhost:8080/a',
          enabled: true,
          webhookTypes: ['payment', 'custodialAccount'],
          hasSharedSecret: true,
        }),
      );
      res = await patchConfig(t, org, { url: 'http://localhost:8081/b' }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          url: 'http://localhost:8081/b',
          enabled: true,
          webhookTypes: ['payment', 'custodialAccount'],
          hasSharedSecret: true,
        }),
      );
      res = await patchConfig(t, org, { webhookTypes: [] }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ url: 'http://localhost:8081/b', enabled: true, webhookTypes: [], hasSharedSecret: true }),
      );
      expect((await getConfig(t, org).expect(200)).body).toEqual(res.body);
    });

    it('clears url and secret with null while disabled', async () => {
      const org = await newOrganization(t);
      await patchConfig(t, org, { url: 'http://127.0.0.1/x', sharedSecret: secretFor('clear') }).expect(200);
      const res = await patchConfig(t, org, { url: null, sharedSecret: null }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ url: null, hasSharedSecret: false, enabled: false }));
      expect(await t.app.get(DeliveryTargetReader).target(org.id)).toEqual({
        organizationId: org.id,
        endpointId: org.id,
        isDefault: true,
        contractAddresses: null,
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        updatedAt: expect.any(Date),
        payload: 'thin',
        filter: null,
        retryScheduleMs: null,
        enabled: false,
        url: null,
        webhookTypes: [],
        secret: null,
        secretError: null,
        previous: null,
        signingKeys: null,
        auth: null,
        tls: null,
        destination: null,
        ordering: 'none',
      });
    });

    it('moves updatedAtUtc only when something changes', async () => {
      const org = await newOrganization(t);
      const first = await patchConfig(t, org, { url: 'http://127.0.0.1/same', webhookTypes: ['nft'] }).expect(200);
      const again = await patchConfig(t, org, { url: 'http://127.0.0.1/same', webhookTypes: ['nft'], enabled: false }).expect(200);
      expect(again.body).toEqual(first.body);
      expect(await auditEntries(t, org)).toHaveLength(1);
      const changed = await patchConfig(t, org, { webhookTypes: ['nft', 'kyc'] }).expect(200);
      expect(changed.body.updatedAtUtc > first.body.updatedAtUtc).toBe(true);
    });
  });

  describe('validation', () => {
    let org: Org;
    beforeAll(async () => {
      org = await newOrganization(t);
    });

    it.each([
      ['url that is not a URL', { url: 'not a url' }, 'url'],
      ['relative url', { url: '/hooks' }, 'url'],
      ['url without scheme', { url: 'example.com/hooks' }, 'url'],
      ['ftp url', { url: 'ftp://127.0.0.1/hooks' }, 'url'],
      ['javascript url', { url: 'javascript:alert(1)' }, 'url'],
      ['url of 2,049 characters', { url: `http://127.0.0.1/${'a'.repeat(2049 - 'http://127.0.0.1/'.length)}` }, 'url'],
      ['url with credentials', { url: 'http://user:pass@127.0.0.1/hooks' }, 'url'],
      ['url with a user name', { url: 'https://user@localhost/hooks' }, 'url'],
      ['empty url', { url: '' }, 'url'],
      ['url that is not a string', { url: 42 }, 'url'],
      ['url whose host does not resolve', { url: 'http://no-such-host.invalid/hooks' }, 'url'],
      ['secret of 15 characters', { sharedSecret: 's'.repeat(15) }, 'sharedSecret'],
      ['secret of 257 characters', { sharedSecret: 's'.repeat(257) }, 'sharedSecret'],
      ['secret that is not a string', { sharedSecret: 1234567890123456 }, 'sharedSecret'],
      ['duplicate webhook types', { webhookTypes: ['nft', 'nft'] }, 'webhookTypes'],
      ['unknown webhook type', { webhookTypes: ['nft', 'sms'] }, 'webhookTypes'],
      ['webhook types that are not an array', { webhookTypes: 'nft' }, 'webhookTypes'],
      ['webhook types of the wrong type', { webhookTypes: [1] }, 'webhookTypes'],
      ['null webhook types', { webhookTypes: null }, 'webhookTypes'],
      ['enabled that is not a boolean', { enabled: 'true' }, 'enabled'],
      ['null enabled', { enabled: null }, 'enabled'],
      ['an unknown field', { callbackUrl: 'http://127.0.0.1/' }, 'callbackUrl'],
      ['a read-only field', { hasSharedSecret: true }, 'hasSharedSecret'],
    ])('refuses %s with 400 VALIDATION_FAILED naming the field', async (_, body, field) => {
      const before = (await getConfig(t, org).expect(200)).body;
      const res = await patchConfig(t, org, body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(fieldsOf(res)).toContain(field);
      for (const error of res.body.errors) expect(error.message).toEqual(expect.any(String));
      expect((await getConfig(t, org).expect(200)).body).toEqual(before);
    });

    it('explains each url refusal', async () => {
      const message = async (url: unknown) => (await patchConfig(t, org, { url }).expect(400)).body.errors[0].message;
      expect(await message('ftp://127.0.0.1/')).toBe('url must be an absolute http or https URL');
      expect(await message(`http://127.0.0.1/${'a'.repeat(2048)}`)).toMatch(/2048/);
      expect(await message('http://a:b@127.0.0.1/')).toBe('url must not contain credentials (user:password@)');
      expect(await message('http://no-such-host.invalid/')).toBe(`url ${FORBIDDEN_TARGET_MESSAGE}`);
    });

    it('refuses a JSON body that is not an object', async () => {
      const res = await t.http().patch(PATH).set(bearer(org.admin.key)).set('content-type', 'application/json').send('[]');
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(fieldsOf(res)).toEqual(['body']);
    });

    it('accepts the boundaries: 16 and 256 character secrets, a 2,048 character url, all six types', async () => {
      await patchConfig(t, org, { sharedSecret: 's'.repeat(16) }).expect(200);
      await patchConfig(t, org, { sharedSecret: 's'.repeat(256) }).expect(200);
      const url = `http://127.0.0.1/${'a'.repeat(2048 - 'http://127.0.0.1/'.length)}`;
      const res = await patchConfig(t, org, {
        url,
        webhookTypes: ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'],
      }).expect(200);
      expect(res.body.url).toBe(url);
      expect(res.body.webhookTypes).toEqual(['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount']);
    });
  });

  describe('enabling needs a url and a shared secret', () => {
    it('answers 422 WEBHOOK_CONFIG_INCOMPLETE naming what is missing, and changes nothing', async () => {
      const org = await newOrganization(t);
      let res = await patchConfig(t, org, { enabled: true });
      expectProblem(res, 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expect(fieldsOf(res).sort()).toEqual(['sharedSecret', 'url']);

      res = await patchConfig(t, org, { enabled: true, url: 'http://127.0.0.1/hooks', webhookTypes: ['nft'] });
      expectProblem(res, 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expect(fieldsOf(res)).toEqual(['sharedSecret']);
      expect((await getConfig(t, org).expect(200)).body).toEqual({ ...DEFAULTS, updatedAtUtc: org.createdAtUtc });

      await patchConfig(t, org, { sharedSecret: secretFor('incomplete') }).expect(200);
      res = await patchConfig(t, org, { enabled: true });
      expectProblem(res, 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expect(fieldsOf(res)).toEqual(['url']);
      expect(await auditEntries(t, org)).toHaveLength(1);
    });

    it('accepts url, secret and enabled in one request', async () => {
      const org = await newOrganization(t);
      const res = await patchConfig(t, org, { enabled: true, url: 'http://127.0.0.1/hooks', sharedSecret: secretFor('one-go') }).expect(
        200,
      );
      expect(res.body).toEqual(expect.objectContaining({ enabled: true, hasSharedSecret: true, url: 'http://127.0.0.1/hooks' }));
    });

    it('refuses to clear the url or the secret of an enabled configuration', async () => {
      const org = await newOrganization(t);
      const complete = await patchConfig(t, org, { enabled: true, url: 'http://127.0.0.1/hooks', sharedSecret: secretFor('keep') }).expect(
        200,
      );
      expectProblem(await patchConfig(t, org, { url: null }), 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expectProblem(await patchConfig(t, org, { sharedSecret: null }), 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expect((await getConfig(t, org).expect(200)).body).toEqual(complete.body);
      // Disabling and clearing together is fine.
      const res = await patchConfig(t, org, { enabled: false, url: null, sharedSecret: null }).expect(200);
      expect(res.body).toEqual(expect.objectContaining({ enabled: false, url: null, hasSharedSecret: false }));
    });
  });

  describe('a rejected PATCH changes nothing', () => {
    it('applies no part of a request that fails on one field', async () => {
      const org = await newOrganization(t);
      const before = (await patchConfig(t, org, { url: 'http://127.0.0.1/old', webhookTypes: ['nft'] }).expect(200)).body;
      expectProblem(await patchConfig(t, org, { url: 'http://127.0.0.1/new', sharedSecret: 'short' }), 400, 'VALIDATION_FAILED');
      expectProblem(await patchConfig(t, org, { webhookTypes: ['kyc'], url: 'ftp://127.0.0.1/' }), 400, 'VALIDATION_FAILED');
      expectProblem(await patchConfig(t, org, { webhookTypes: ['kyc'], enabled: true }), 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expect((await getConfig(t, org).expect(200)).body).toEqual(before);
      expect(await auditEntries(t, org)).toHaveLength(1);
      const [row] = await storedRows(t, org.id);
      expect(row).toEqual({ url: 'http://127.0.0.1/old', enabled: false, shared_secret_sealed: null });
    });
  });

  describe('the shared secret', () => {
    it('never appears in a response, the audit log, a log line or the database in clear', async () => {
      const org = await newOrganization(t);
      const secret = secretFor('sealed');
      const bodies: string[] = [];
      const keep = (res: { text: string }) => {
        bodies.push(res.text);
        return res;
      };

      keep(await patchConfig(t, org, { sharedSecret: secret, webhookTypes: ['nft'] }).expect(200));
      keep(await getConfig(t, org).expect(200));
      // Refusals that carry the secret in the request must not echo it either.
      keep(await patchConfig(t, org, { sharedSecret: secret, enabled: true }).expect(422));
      keep(await patchConfig(t, org, { sharedSecret: `${secret}${'x'.repeat(256)}` }).expect(400));
      keep(await patchConfig(t, org, { sharedSecret: secret, url: 'ftp://127.0.0.1/' }).expect(400));
      keep(await patchConfig(t, org, { sharedSecret: secret, unexpected: secret }).expect(400));
      keep(await t.http().get(AUDIT_PATH).set(bearer(org.admin.key)).expect(200));
      for (const body of bodies) expect(body).not.toContain(secret);

      const [entry] = await auditEntries(t, org);
      expect(entry.changes.sharedSecret).toEqual({ from: null, to: '[redacted]' });

      // The captured log really holds this app's request lines, so its silence about the secret means something.
      expect(t.logs.some((line) => line.includes('/webhook-config'))).toBe(true);
      for (const line of t.logs) expect(line).not.toContain(secret);

      const [row] = await storedRows(t, org.id);
      const sealed = row.shared_secret_sealed!;
      expect(sealed).toMatch(/^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9+/]+={0,2}\.[A-Za-z0-9+/]+={0,2}\.[A-Za-z0-9+/]+={0,2}$/);
      expect(sealed).not.toContain(secret);
      expect(sealed).not.toContain(Buffer.from(secret).toString('base64').slice(0, 16));
      expect(sealed).not.toContain(Buffer.from(secret).toString('hex').slice(0, 16));
    });

    it('opens only for the delivery code, and a new secret replaces the old at once', async () => {
      const org = await newOrganization(t);
      const service = t.app.get(DeliveryTargetReader);
      const first = secretFor('first');
      await patchConfig(t, org, {
        url: 'http://127.0.0.1:9999/in',
        sharedSecret: first,
        webhookTypes: ['transaction'],
        enabled: true,
      }).expect(200);
      expect(await service.target(org.id)).toEqual({
        organizationId: org.id,
        endpointId: org.id,
        isDefault: true,
        contractAddresses: null,
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        updatedAt: expect.any(Date),
        payload: 'thin',
        filter: null,
        retryScheduleMs: null,
        enabled: true,
        url: 'http://127.0.0.1:9999/in',
        webhookTypes: ['transaction'],
        secret: first,
        secretError: null,
        previous: null,
        signingKeys: null,
        auth: null,
        tls: null,
        destination: null,
        ordering: 'none',
      });
      const [before] = await storedRows(t, org.id);

      const second = secretFor('second');
      await patchConfig(t, org, { sharedSecret: second }).expect(200);
      expect((await service.target(org.id))?.secret).toBe(second);
      const [after] = await storedRows(t, org.id);
      expect(after.shared_secret_sealed).not.toBe(before.shared_secret_sealed);

      const entries = await auditEntries(t, org);
      expect(entries[0].changes).toEqual({ sharedSecret: { from: '[redacted]', to: '[redacted]' } });
      const audit = await t.http().get(AUDIT_PATH).set(bearer(org.admin.key)).expect(200);
      expect(audit.text).not.toContain(first);
      expect(audit.text).not.toContain(second);
    });

    it('gives the delivery code every change on the very next read', async () => {
      const org = await newOrganization(t);
      const service = t.app.get(DeliveryTargetReader);
      expect(await service.target(org.id)).toEqual({
        organizationId: org.id,
        endpointId: org.id,
        isDefault: true,
        enabled: false,
        url: null,
        webhookTypes: [],
        contractAddresses: null,
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        secret: null,
        secretError: null,
        previous: null,
        signingKeys: null,
        auth: null,
        tls: null,
        destination: null,
        ordering: 'none',
        updatedAt: expect.any(Date),
        payload: 'thin',
        filter: null,
        retryScheduleMs: null,
      });
      await patchConfig(t, org, {
        url: 'http://127.0.0.1:9999/a',
        sharedSecret: secretFor('fresh'),
        enabled: true,
        webhookTypes: ['nft'],
      }).expect(200);
      expect((await service.target(org.id))?.enabled).toBe(true);
      await patchConfig(t, org, { enabled: false }).expect(200);
      expect((await service.target(org.id))?.enabled).toBe(false);
      await patchConfig(t, org, { url: 'http://127.0.0.1:9999/b', webhookTypes: ['kyc', 'nft'] }).expect(200);
      expect(await service.target(org.id)).toEqual(
        expect.objectContaining({ url: 'http://127.0.0.1:9999/b', webhookTypes: ['nft', 'kyc'] }),
      );
      // An organization without a configuration row (or none at all) has the defaults: nothing is sent.
      expect(await service.target('01a20000-0000-7000-8000-000000000000')).toEqual(
        expect.objectContaining({ url: null, enabled: false, secret: null }),
      );
    });
  });

  describe('audit log', () => {
    it('records each change as webhookConfig.update with {field: {from, to}}', async () => {
      const org = await newOrganization(t);
      const first = await patchConfig(t, org, { url: 'http://127.0.0.1/one', webhookTypes: ['nft'] })
        .set('x-request-id', 'webhook-config-audit-1')
        .expect(200);
      expect(first.headers['x-request-id']).toBe('webhook-config-audit-1');
      await patchConfig(t, org, { url: 'http://127.0.0.1/two', sharedSecret: secretFor('audit'), enabled: true }).expect(200);

      const entries = await auditEntries(t, org);
      expect(entries).toHaveLength(2);
      // Newest first.
      expect(entries[0].changes).toEqual({
        url: { from: 'http://127.0.0.1/one', to: 'http://127.0.0.1/two' },
        sharedSecret: { from: null, to: '[redacted]' },
        enabled: { from: false, to: true },
      });
      expect(entries[1].changes).toEqual({
        url: { from: null, to: 'http://127.0.0.1/one' },
        webhookTypes: { from: [], to: ['nft'] },
      });
      expect(entries[1]).toEqual(
        expect.objectContaining({ apiKeyId: org.admin.id, keyPrefix: org.admin.keyPrefix, requestId: 'webhook-config-audit-1' }),
      );
    });

    it('records nothing for a PATCH that changes nothing or is refused', async () => {
      const org = await newOrganization(t);
      await patchConfig(t, org, {}).expect(200);
      await patchConfig(t, org, { enabled: false, webhookTypes: [], url: null }).expect(200);
      await patchConfig(t, org, { enabled: true }).expect(422);
      await patchConfig(t, org, { url: 'ftp://x/' }).expect(400);
      expect(await auditEntries(t, org)).toEqual([]);
    });
  });

  describe('access', () => {
    it('is for admin keys only: 403 for read and write keys, 401 without a key', async () => {
      const org = await newOrganization(t);
      const reader = await createApiKey(t, org.id, ['read']);
      const writer = await createApiKey(t, org.id, ['write', 'read']);
      for (const key of [reader.key, writer.key]) {
        expectProblem(await t.http().get(PATH).set(bearer(key)), 403, 'FORBIDDEN');
        expectProblem(
          await t
            .http()
            .patch(PATH)
            .set(bearer(key))
            .send({ webhookTypes: ['nft'] }),
          403,
          'FORBIDDEN',
        );
      }
      expectProblem(await t.http().get(PATH), 401, 'UNAUTHENTICATED');
      expectProblem(
        await t
          .http()
          .patch(PATH)
          .send({ webhookTypes: ['nft'] }),
        401,
        'UNAUTHENTICATED',
      );
      expectProblem(await t.http().get(PATH).set(bearer(OPERATOR_KEY)), 401, 'INVALID_API_KEY');
      expect((await getConfig(t, org).expect(200)).body).toEqual({ ...DEFAULTS, updatedAtUtc: org.createdAtUtc });
    });

    it("never lets one organization read or change another's configuration", async () => {
      const a = await newOrganization(t);
      const b = await newOrganization(t);
      const secretA = secretFor('org-a');
      const secretB = secretFor('org-b');
      await patchConfig(t, a, { url: 'http://127.0.0.1/a', sharedSecret: secretA, webhookTypes: ['nft'], enabled: true }).expect(200);
      expect((await getConfig(t, b).expect(200)).body).toEqual({ ...DEFAULTS, updatedAtUtc: b.createdAtUtc });

      await patchConfig(t, b, { url: 'http://127.0.0.1/b', sharedSecret: secretB, webhookTypes: ['kyc'] }).expect(200);
      expect((await getConfig(t, a).expect(200)).body).toEqual(
        expect.objectContaining({ url: 'http://127.0.0.1/a', enabled: true, webhookTypes: ['nft'] }),
      );
      const service = t.app.get(DeliveryTargetReader);
      expect((await service.target(a.id))?.secret).toBe(secretA);
      expect((await service.target(b.id))?.secret).toBe(secretB);
      expect((await auditEntries(t, a)).map((e) => e.changes.url)).toEqual([{ from: null, to: 'http://127.0.0.1/a' }]);
    });

    it("does not open a sealed secret moved to another organization's row", async () => {
      const a = await newOrganization(t);
      const b = await newOrganization(t);
      await patchConfig(t, a, { sharedSecret: secretFor('moved') }).expect(200);
      await patchConfig(t, b, { sharedSecret: secretFor('victim') }).expect(200);
      const connection = t.app.get(MikroORM).em.fork().getConnection();
      await connection.execute(
        'update webhook_endpoint set shared_secret_sealed = (select shared_secret_sealed from webhook_endpoint where id = ?) where id = ?',
        [a.id, b.id],
      );
      expect(await t.app.get(DeliveryTargetReader).target(b.id)).toEqual(
        expect.objectContaining({ secret: null, secretError: expect.stringMatching(/does not authenticate/) }),
      );
    });
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body;
    expect(Object.keys(doc.paths[PATH]).sort()).toEqual(['get', 'patch']);
    expect(doc.paths[PATH].patch.security).toEqual([{ apiKey: [] }]);
  });

  describe('concurrent changes', () => {
    it('keep exactly one configuration per organization', async () => {
      const org = await newOrganization(t);
      const types = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];
      const results = await Promise.all(
        types.map((type, i) => patchConfig(t, org, { webhookTypes: [type], url: `http://127.0.0.1/${i}` })),
      );
      expect(results.map((r) => r.status)).toEqual(types.map(() => 200));
      expect(await storedRows(t, org.id)).toHaveLength(1);
      const final = (await getConfig(t, org).expect(200)).body;
      const index = types.indexOf(final.webhookTypes[0]);
      expect(final.url).toBe(`http://127.0.0.1/${index}`);
      expect(await auditEntries(t, org)).toHaveLength(types.length);
    });

    it('never end enabled without a secret when enabling races with clearing the secret', async () => {
      const org = await newOrganization(t);
      await patchConfig(t, org, { url: 'http://127.0.0.1/race', sharedSecret: secretFor('race') }).expect(200);
      const [enable, clear] = await Promise.all([patchConfig(t, org, { enabled: true }), patchConfig(t, org, { sharedSecret: null })]);
      expect([enable.status, clear.status].sort()).toEqual([200, 422]);
      const final = (await getConfig(t, org).expect(200)).body;
      expect(final.enabled && !final.hasSharedSecret).toBe(false);
    });
  });

  describe('URL policy of a deployment that allows http and private networks (the default outside production)', () => {
    it.each([
      'http://127.0.0.1:9999/hooks',
      'http://localhost:8080/hooks',
      'http://10.0.0.1/hooks',
      'http://[::1]:8080/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
      'https://169.254.169.254/hooks',
      'https://93.184.216.34/hook',
    ])('accepts %s', async (url) => {
      const org = await newOrganization(t);
      const res = await patchConfig(t, org, { url }).expect(200);
      expect(res.body.url).toBe(url);
    });
  });
});

describe('webhook configuration on a strict deployment (https only, no private networks)', () => {
  let strict: TestApp;
  let org: Org;

  beforeAll(async () => {
    strict = await createTestApp({ WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    org = await newOrganization(strict);
  });
  afterAll(async () => {
    await strict.close();
  });

  it('accepts a public https URL', async () => {
    const res = await patchConfig(strict, org, { url: 'https://93.184.216.34/hook' }).expect(200);
    expect(res.body.url).toBe('https://93.184.216.34/hook');
  });

  it('requires https', async () => {
    const res = await patchConfig(strict, org, { url: 'http://93.184.216.34/hook' });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual([{ field: 'url', message: 'url must use https' }]);
  });

  it.each([
    ['IPv4 loopback', 'https://127.0.0.1/hook'],
    ['IPv4 loopback in decimal form', 'https://2130706433/hook'],
    ['IPv4 loopback in short form', 'https://127.1/hook'],
    ['unspecified IPv4', 'https://0.0.0.0/hook'],
    ['10/8', 'https://10.1.2.3/hook'],
    ['172.16/12', 'https://172.31.0.1/hook'],
    ['192.168/16', 'https://192.168.0.10:8443/hook'],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest/meta-data'],
    ['CGNAT 100.64/10', 'https://100.64.0.1/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['unspecified IPv6', 'https://[::]/hook'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['IPv4-mapped IPv6 private, hex form', 'https://[::ffff:a00:1]/hook'],
    ['unique local fc00::/7', 'https://[fd12:3456::1]/hook'],
    ['IPv6 link-local fe80::/10', 'https://[fe80::1]/hook'],
    ['a hostname that resolves to loopback', 'https://localhost/hook'],
    ['a hostname that resolves to loopback, with a port', 'https://localhost:8443/hook'],
  ])('refuses %s', async (_, url) => {
    const before = (await getConfig(strict, org).expect(200)).body;
    const res = await patchConfig(strict, org, { url });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/private, loopback, link-local/) }]);
    expect((await getConfig(strict, org).expect(200)).body).toEqual(before);
  });

  it('refuses a hostname that does not resolve with the same code and message as one resolving to a refused address', async () => {
    const res = await patchConfig(strict, org, { url: 'https://no-such-host.invalid/hook' });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual([{ field: 'url', message: `url ${FORBIDDEN_TARGET_MESSAGE}` }]);
    // An internal name that resolves (localhost) cannot be told apart from one that does not.
    const internal = await patchConfig(strict, org, { url: 'https://localhost/hook' });
    expectProblem(internal, 400, 'VALIDATION_FAILED');
    expect(internal.body).toEqual({ ...res.body, requestId: internal.body.requestId });
  });

  it.each([
    'https://93.184.216.34:6379/hook',
    'https://93.184.216.34:5432/hook',
    'https://93.184.216.34:22/hook',
    'https://93.184.216.34:80/hook',
  ])('refuses a port outside WEBHOOK_ALLOWED_PORTS: %s', async (url) => {
    const res = await patchConfig(strict, org, { url });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/^url must not use port \d+ on this deployment/) }]);
  });

  it('accepts any port an operator allows explicitly', async () => {
    const custom = await createTestApp({
      WEBHOOK_ALLOW_HTTP: 'false',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
      WEBHOOK_ALLOWED_PORTS: '443,6379',
    });
    try {
      const other = await newOrganization(custom);
      await patchConfig(custom, other, { url: 'https://93.184.216.34:6379/hook' }).expect(200);
      expectProblem(await patchConfig(custom, other, { url: 'https://93.184.216.34:8443/hook' }), 400, 'VALIDATION_FAILED');
    } finally {
      await custom.close();
    }
  });

  it('still refuses credentials and other schemes', async () => {
    expectProblem(await patchConfig(strict, org, { url: 'https://u:p@93.184.216.34/hook' }), 400, 'VALIDATION_FAILED');
    expectProblem(await patchConfig(strict, org, { url: 'ftp://93.184.216.34/hook' }), 400, 'VALIDATION_FAILED');
  });
});
