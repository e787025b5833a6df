import { bearer, createApiKey, createOrganization, expectProblem } from './support/factories';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

const operator = bearer(OPERATOR_KEY);

describe('foundation: operator bootstrap, API keys and authentication', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('operator endpoints', () => {
    it('creates an organization and answers {id, name, createdAtUtc}', async () => {
      const res = await t.http().post('/admin/v1/organizations').set(operator).send({ name: 'Acme' }).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['createdAtUtc', 'id', 'name']);
      expect(res.body.name).toBe('Acme');
      expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(res.body.createdAtUtc).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    });

    it('lists organizations page by page without repeats', async () => {
      for (let i = 0; i < 3; i += 1) await createOrganization(t);
      const seen: string[] = [];
      let pageKey: string | null = null;
      do {
        const res: { body: { organizations: { id: string }[]; nextPageKey: string | null } } = await t
          .http()
          .get('/admin/v1/organizations')
          .query(pageKey ? { pageSize: 2, pageKey } : { pageSize: 2 })
          .set(operator)
          .expect(200);
        expect(res.body.organizations.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.organizations.map((o: { id: string }) => o.id));
        pageKey = res.body.nextPageKey;
      } while (pageKey);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect([...seen].sort()).toEqual(seen);
    });

    it('creates keys shown once, with the contract shape', async () => {
      const org = await createOrganization(t);
      const res = await t
        .http()
        .post(`/admin/v1/organizations/${org.id}/api-keys`)
        .set(operator)
        .send({ name: 'reader', roles: ['read'] })
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['createdAtUtc', 'id', 'key', 'keyPrefix', 'name', 'roles']);
      expect(res.body.roles).toEqual(['read']);
      expect(res.body.key.startsWith(res.body.keyPrefix)).toBe(true);
      expect(Buffer.from(res.body.key.slice(5), 'base64url').length).toBeGreaterThanOrEqual(32);

      const list = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(org.adminKey)).expect(200);
      expect(JSON.stringify(list.body)).not.toContain(res.body.key);
      expect(list.body.apiKeys.map((k: { id: string }) => k.id)).toContain(res.body.id);
    });

    it('answers 404 ORGANIZATION_NOT_FOUND for keys of an unknown organization', async () => {
      const res = await t
        .http()
        .post('/admin/v1/organizations/01a20000-0000-7000-8000-000000000000/api-keys')
        .set(operator)
        .send({ name: 'x', roles: ['read'] });
      expectProblem(res, 404, 'ORGANIZATION_NOT_FOUND');
    });

    it('rejects bad roles and empty names with field errors', async () => {
      const org = await createOrganization(t);
      const res = await t
        .http()
        .post(`/admin/v1/organizations/${org.id}/api-keys`)
        .set(operator)
        .send({ name: '', roles: ['root'] });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      const fields = res.body.errors.map((e: { field: string }) => e.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'roles']));
    });

    it('refuses a wrong operator key and API keys on operator routes', async () => {
      expectProblem(await t.http().get('/admin/v1/organizations'), 401, 'UNAUTHENTICATED');
      expectProblem(await t.http().get('/admin/v1/organizations').set(bearer('wrong-operator-key-000000')), 401, 'INVALID_API_KEY');
      const org = await createOrganization(t);
      expectProblem(await t.http().get('/admin/v1/organizations').set(bearer(org.adminKey)), 401, 'INVALID_API_KEY');
    });

    it('records operator actions in the organization audit log', async () => {
      const org = await createOrganization(t);
      const res = await t.http().get('/api/organization/v1/current-organization/audit-log').set(bearer(org.adminKey)).expect(200);
      const actions = res.body.entries.map((e: { action: string }) => e.action);
      expect(actions).toEqual(['apiKey.create', 'organization.create']);
      expect(res.body.entries[0]).toEqual(
        expect.objectContaining({ keyPrefix: 'operator', apiKeyId: null, requestId: expect.any(String) }),
      );
    });
  });

  describe('authentication outcomes', () => {
    const adminPath = '/api/organization/v1/current-organization/api-keys';

    it('401 UNAUTHENTICATED without a key, with a Bearer challenge', async () => {
      const res = await t.http().get(adminPath);
      expectProblem(res, 401, 'UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('401 INVALID_API_KEY for an unknown key or a malformed header', async () => {
      expectProblem(await t.http().get(adminPath).set(bearer('nftw_unknown_key_value_000000000000000')), 401, 'INVALID_API_KEY');
      expectProblem(await t.http().get(adminPath).set('authorization', 'Basic abc'), 401, 'UNAUTHENTICATED');
    });

    it('does not read keys from the query string', async () => {
      const org = await createOrganization(t);
      expectProblem(await t.http().get(adminPath).query({ access_token: org.adminKey }), 401, 'UNAUTHENTICATED');
    });

    it('403 FORBIDDEN when the key lacks the role; admin implies everything', async () => {
      const org = await createOrganization(t);
      const reader = await createApiKey(t, org.id, ['read']);
      const writer = await createApiKey(t, org.id, ['write']);
      expectProblem(await t.http().get(adminPath).set(bearer(reader.key)), 403, 'FORBIDDEN');
      expectProblem(await t.http().get(adminPath).set(bearer(writer.key)), 403, 'FORBIDDEN');
      await t.http().get(adminPath).set(bearer(org.adminKey)).expect(200);
    });

    it('refuses a key revoked by the operator, and an admin can revoke its own organization keys', async () => {
      const org = await createOrganization(t);
      const victim = await createApiKey(t, org.id, ['admin']);
      await t.http().get(adminPath).set(bearer(victim.key)).expect(200);
      await t.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${victim.id}`).set(operator).expect(204);
      expectProblem(await t.http().get(adminPath).set(bearer(victim.key)), 401, 'INVALID_API_KEY');

      const second = await createApiKey(t, org.id, ['read']);
      await t.http().delete(`${adminPath}/${second.id}`).set(bearer(org.adminKey)).expect(204);
      const list = await t.http().get(adminPath).set(bearer(org.adminKey)).expect(200);
      const revoked = list.body.apiKeys.find((k: { id: string }) => k.id === second.id);
      expect(revoked.revokedAtUtc).toMatch(/\+00:00$/);
      // Revoking again is not an error and changes nothing.
      await t.http().delete(`${adminPath}/${second.id}`).set(bearer(org.adminKey)).expect(204);
    });

    it("never lets one organization see or revoke another's keys", async () => {
      const a = await createOrganization(t);
      const b = await createOrganization(t);
      const bKey = await createApiKey(t, b.id, ['read']);
      expectProblem(await t.http().delete(`${adminPath}/${bKey.id}`).set(bearer(a.adminKey)), 404, 'API_KEY_NOT_FOUND');
      const list = await t.http().get(adminPath).set(bearer(a.adminKey)).expect(200);
      expect(list.body.apiKeys.map((k: { id: string }) => k.id)).not.toContain(bKey.id);
      const audit = await t.http().get('/api/organization/v1/current-organization/audit-log').set(bearer(a.adminKey)).expect(200);
      expect(JSON.stringify(audit.body)).not.toContain(b.id);
    });

    it('a revocation on one instance is refused by another instance within 5 s', async () => {
      const other = await createTestApp();
      try {
        const org = await createOrganization(t);
        const key = await createApiKey(t, org.id, ['admin']);
        await other.http().get(adminPath).set(bearer(key.key)).expect(200); // cached on the other instance
        await t.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${key.id}`).set(operator).expect(204);
        const revokedAt = Date.now();
        let status = 200;
        while (status === 200 && Date.now() - revokedAt < 5000) {
          status = (await other.http().get(adminPath).set(bearer(key.key))).status;
          if (status === 200) await new Promise((r) => setTimeout(r, 100));
        }
        expect(status).toBe(401);
      } finally {
        await other.close();
      }
    });
  });
});

describe('foundation: operator API disabled', () => {
  it('answers 404 OPERATOR_API_DISABLED when OPERATOR_API_KEY is unset', async () => {
    const t = await createTestApp({ OPERATOR_API_KEY: undefined });
    try {
      expectProblem(await t.http().get('/admin/v1/organizations').set(operator), 404, 'OPERATOR_API_DISABLED');
    } finally {
      await t.close();
    }
  });
});
