import { getAddress } from 'viem';
import { openSecret } from '../src/common/crypto/secret-box';
import { WebhookEndpointsService } from '../src/modules/webhook-endpoints/webhook-endpoints.service';
import { bearer, createApiKey, expectProblem } from './support/factories';
import { newAddress, sql, UNKNOWN_ID, UTC_TIMESTAMP } from './support/nft';
import { createTestApp, OPERATOR_KEY, TestApp } from './support/test-app';

const BASE = '/api/organization/v1/current-organization/webhook-endpoints';
const CONFIG_PATH = '/api/organization/v1/current-organization/webhook-config';
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const URL_A = 'http://127.0.0.1:9999/endpoint-a';
const URL_B = 'http://localhost:9998/endpoint-b';
// The EIP-55 reference vectors.
const CONTRACT_1 = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const CONTRACT_2 = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
const ENDPOINT_KEYS = [
  'auth',
  'createdAtUtc',
  'description',
  'destination',
  'disabledReason',
  'enabled',
  'filter',
  'filters',
  'hasSharedSecret',
  'headers',
  'id',
  'isDefault',
  'maxInFlight',
  'ordering',
  'payload',
  'previousPublicKey',
  'previousSecretExpiresAtUtc',
  'publicKey',
  'rateLimitPerSecond',
  'retrySchedule',
  'tls',
  'updatedAtUtc',
  'url',
  'webhookTypes',
];

interface Org {
  id: string;
  createdAtUtc: string;
  admin: { id: string; key: string; keyPrefix: string };
}

let counter = 0;
/** A unique, recognisable secret, so a test can search every output for it. */
const secretFor = (label: string) => `whsec-ep-${label}-${Date.now()}-${(counter += 1)}-Zq9`;

async function newOrganization(t: TestApp): Promise<Org> {
  counter += 1;
  const created = await t
    .http()
    .post('/admin/v1/organizations')
    .set(bearer(OPERATOR_KEY))
    .send({ name: `Webhook endpoints org ${counter}` })
    .expect(201);
  const admin = await createApiKey(t, created.body.id, ['admin']);
  return { id: created.body.id, createdAtUtc: created.body.createdAtUtc, admin };
}

const list = (t: TestApp, key: string, query: Record<string, unknown> = {}) => t.http().get(BASE).set(bearer(key)).query(query);
const getOne = (t: TestApp, key: string, id: string) => t.http().get(`${BASE}/${id}`).set(bearer(key));
const create = (t: TestApp, key: string, body: unknown) =>
  t
    .http()
    .post(BASE)
    .set(bearer(key))
    .send(body as object);
const patch = (t: TestApp, key: string, id: string, body: unknown) =>
  t
    .http()
    .patch(`${BASE}/${id}`)
    .set(bearer(key))
    .send(body as object);
const remove = (t: TestApp, key: string, id: string) => t.http().delete(`${BASE}/${id}`).set(bearer(key));
const rotate = (t: TestApp, key: string, id: string, body: unknown = {}) =>
  t
    .http()
    .post(`${BASE}/${id}/rotate-secret`)
    .set(bearer(key))
    .send(body as object);

/** A valid endpoint body; tests override what they are about. */
const endpointBody = (overrides: Record<string, unknown> = {}) => ({
  url: URL_A,
  webhookTypes: ['nft', 'transaction'],
  sharedSecret: secretFor('body'),
  ...overrides,
});

async function auditEntries(t: TestApp, org: Org, prefix = 'webhookEndpoint.') {
  const res = await t.http().get(AUDIT_PATH).set(bearer(org.admin.key)).query({ pageSize: 1000 }).expect(200);
  return (
    res.body.entries as Array<{
      action: string;
      apiKeyId: string | null;
      keyPrefix: string | null;
      requestId: string | null;
      ip: string | null;
      changes: Record<string, { from: unknown; to: unknown }>;
    }>
  ).filter((e) => e.action.startsWith(prefix));
}

async function storedEndpoint(t: TestApp, id: string) {
  const [row] = await sql<{
    organization_id: string;
    contract_addresses: string[] | null;
    shared_secret_sealed: string;
    previous_shared_secret_sealed: string | null;
    previous_secret_expires_at: Date | null;
  }>(t, 'select * from webhook_endpoint where id = ?', [id]);
  return row;
}

const fieldsOf = (res: { body: { errors?: Array<{ field: string }> } }) => (res.body.errors ?? []).map((e) => e.field);

describe('webhook endpoints', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('the default endpoint', () => {
    it('is listed first: the webhook configuration, with the organization id, no description and no filter', async () => {
      const org = await newOrganization(t);
      const res = await list(t, org.admin.key).expect(200);
      expect(res.body).toEqual({
        endpoints: [
          {
            id: org.id,
            isDefault: true,
            url: null,
            description: null,
            enabled: false,
            webhookTypes: [],
            filters: { contractAddresses: null },
            headers: {},
            rateLimitPerSecond: null,
            maxInFlight: null,
            ordering: 'none',
            payload: 'thin',
            filter: null,
            retrySchedule: null,
            hasSharedSecret: false,
            previousSecretExpiresAtUtc: null,
            publicKey: null,
            previousPublicKey: null,
            auth: null,
            destination: null,
            tls: null,
            disabledReason: null,
            createdAtUtc: org.createdAtUtc,
            updatedAtUtc: org.createdAtUtc,
          },
        ],
        nextPageKey: null,
      });
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body).toEqual(res.body.endpoints[0]);
    });

    it('is changed by PATCH exactly as PATCH webhook-config changes it, and shows the same', async () => {
      const org = await newOrganization(t);
      const secret = secretFor('default');
      const res = await patch(t, org.admin.key, org.id, {
        url: URL_A,
        sharedSecret: secret,
        webhookTypes: ['nft', 'payment'],
        enabled: true,
      }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          id: org.id,
          isDefault: true,
          url: URL_A,
          enabled: true,
          webhookTypes: ['payment', 'nft'],
          hasSharedSecret: true,
        }),
      );
      expect(res.text).not.toContain(secret);
      const config = (await t.http().get(CONFIG_PATH).set(bearer(org.admin.key)).expect(200)).body;
      expect(config).toEqual({
        url: URL_A,
        enabled: true,
        webhookTypes: ['payment', 'nft'],
        hasSharedSecret: true,
        previousSecretExpiresAtUtc: null,
        updatedAtUtc: res.body.updatedAtUtc,
      });
      // A change made through webhook-config shows on the endpoint.
      await t.http().patch(CONFIG_PATH).set(bearer(org.admin.key)).send({ url: URL_B }).expect(200);
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body.url).toBe(URL_B);
      // Audited as the configuration change it is.
      const [entry] = await auditEntries(t, org, 'webhookConfig.update');
      expect(entry.changes.url).toEqual({ from: URL_A, to: URL_B });
      expect((await auditEntries(t, org, 'webhookConfig.update'))[1].changes.sharedSecret).toEqual({ from: null, to: '[redacted]' });
    });

    it('keeps the configuration rules: enabling without url or secret is 422 WEBHOOK_CONFIG_INCOMPLETE', async () => {
      const org = await newOrganization(t);
      const res = await patch(t, org.admin.key, org.id, { enabled: true, url: URL_A });
      expectProblem(res, 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      expect(fieldsOf(res)).toEqual(['sharedSecret']);
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body).toEqual(expect.objectContaining({ url: null, enabled: false }));
    });

    it('has no description nor filters: 422 DEFAULT_ENDPOINT, and nothing changes', async () => {
      const org = await newOrganization(t);
      const before = (await getOne(t, org.admin.key, org.id).expect(200)).body;
      for (const body of [
        { description: 'main' },
        { description: null },
        { filters: { contractAddresses: [CONTRACT_1] } },
        { filters: null },
        { url: URL_A, filters: {} },
      ]) {
        const res = await patch(t, org.admin.key, org.id, body);
        expectProblem(res, 422, 'DEFAULT_ENDPOINT');
        expect(res.body.detail).toMatch(/default endpoint/);
      }
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body).toEqual(before);
      expect(await auditEntries(t, org, 'webhook')).toEqual([]);
    });

    it('cannot be deleted: 422 DEFAULT_ENDPOINT', async () => {
      const org = await newOrganization(t);
      await patch(t, org.admin.key, org.id, { url: URL_A, sharedSecret: secretFor('keep') }).expect(200);
      const res = await remove(t, org.admin.key, org.id);
      expectProblem(res, 422, 'DEFAULT_ENDPOINT');
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body).toEqual(
        expect.objectContaining({ url: URL_A, hasSharedSecret: true }),
      );
    });

    it("rotates its secret as webhook-config's rotate-secret does", async () => {
      const org = await newOrganization(t);
      expectProblem(await rotate(t, org.admin.key, org.id), 422, 'WEBHOOK_CONFIG_INCOMPLETE');
      await patch(t, org.admin.key, org.id, { url: URL_A, sharedSecret: secretFor('old') }).expect(200);
      const res = await rotate(t, org.admin.key, org.id, { previousSecretValidSeconds: 600 }).expect(200);
      expect(res.body).toEqual({
        sharedSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        previousSecretExpiresAtUtc: expect.stringMatching(UTC_TIMESTAMP),
      });
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body.previousSecretExpiresAtUtc).toBe(
        res.body.previousSecretExpiresAtUtc,
      );
      expect((await t.http().get(CONFIG_PATH).set(bearer(org.admin.key)).expect(200)).body.previousSecretExpiresAtUtc).toBe(
        res.body.previousSecretExpiresAtUtc,
      );
      expect((await auditEntries(t, org, 'webhookConfig.rotateSecret')).length).toBe(1);
    });
  });

  describe('other endpoints', () => {
    it('go through create, read, change and delete', async () => {
      const org = await newOrganization(t);
      const secret = secretFor('crud');
      const created = await create(t, org.admin.key, {
        url: URL_A,
        webhookTypes: ['transaction', 'kyc', 'nft'],
        sharedSecret: secret,
        description: 'Warehouse',
        filters: { contractAddresses: [CONTRACT_2.toLowerCase(), CONTRACT_1, CONTRACT_1.toLowerCase()] },
      }).expect(201);
      expect(Object.keys(created.body).sort()).toEqual(ENDPOINT_KEYS);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        isDefault: false,
        url: URL_A,
        description: 'Warehouse',
        enabled: true,
        // A set, in catalogue order.
        webhookTypes: ['transaction', 'nft', 'kyc'],
        // Lowercase and deduplicated at rest, EIP-55 in answers.
        filters: { contractAddresses: [CONTRACT_1, CONTRACT_2] },
        headers: {},
        rateLimitPerSecond: null,
        maxInFlight: null,
        ordering: 'none',
        payload: 'thin',
        filter: null,
        retrySchedule: null,
        hasSharedSecret: true,
        previousSecretExpiresAtUtc: null,
        publicKey: null,
        previousPublicKey: null,
        auth: null,
        destination: null,
        tls: null,
        disabledReason: null,
        createdAtUtc: expect.stringMatching(UTC_TIMESTAMP),
        updatedAtUtc: expect.stringMatching(UTC_TIMESTAMP),
      });
      expect(created.text).not.toContain(secret);
      const id = created.body.id;
      const stored = await storedEndpoint(t, id);
      expect(stored.organization_id).toBe(org.id);
      expect(stored.contract_addresses).toEqual([CONTRACT_1.toLowerCase(), CONTRACT_2.toLowerCase()]);
      expect(stored.shared_secret_sealed).toMatch(/^v2\./);
      expect(stored.shared_secret_sealed).not.toContain(secret);
      // Sealed for this organization, like the configuration's secret.
      expect(openSecret(stored.shared_secret_sealed, t.config.secretsEncryptionKey, org.id)).toBe(secret);

      expect((await getOne(t, org.admin.key, id).expect(200)).body).toEqual(created.body);
      const listed = (await list(t, org.admin.key).expect(200)).body;
      expect(listed.endpoints.map((e: { id: string }) => e.id)).toEqual([org.id, id]);
      expect(listed.endpoints[1]).toEqual(created.body);

      const changed = await patch(t, org.admin.key, id, {
        url: URL_B,
        description: null,
        enabled: false,
        webhookTypes: ['payment'],
        filters: { contractAddresses: [CONTRACT_2] },
      }).expect(200);
      expect(changed.body).toEqual({
        ...created.body,
        url: URL_B,
        description: null,
        enabled: false,
        webhookTypes: ['payment'],
        filters: { contractAddresses: [CONTRACT_2] },
        updatedAtUtc: expect.stringMatching(UTC_TIMESTAMP),
      });
      expect(changed.body.updatedAtUtc > created.body.updatedAtUtc).toBe(true);
      expect((await getOne(t, org.admin.key, id).expect(200)).body).toEqual(changed.body);

      // The whole filter is replaced: {} removes it.
      const unfiltered = await patch(t, org.admin.key, id, { filters: {} }).expect(200);
      expect(unfiltered.body.filters).toEqual({ contractAddresses: null });
      // A PATCH changing nothing answers the endpoint as it is.
      expect((await patch(t, org.admin.key, id, {}).expect(200)).body).toEqual(unfiltered.body);
      expect((await patch(t, org.admin.key, id, { url: URL_B, enabled: false }).expect(200)).body).toEqual(unfiltered.body);

      const deleted = await remove(t, org.admin.key, id).expect(204);
      expect(deleted.text).toBe('');
      expectProblem(await getOne(t, org.admin.key, id), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      expectProblem(await remove(t, org.admin.key, id), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      expect((await list(t, org.admin.key).expect(200)).body.endpoints.map((e: { id: string }) => e.id)).toEqual([org.id]);
      expect(await storedEndpoint(t, id)).toBeUndefined();
    });

    it('are enabled unless the request says otherwise', async () => {
      const org = await newOrganization(t);
      const off = await create(t, org.admin.key, endpointBody({ enabled: false, webhookTypes: [] })).expect(201);
      expect(off.body).toEqual(
        expect.objectContaining({ enabled: false, webhookTypes: [], description: null, filters: { contractAddresses: null } }),
      );
    });

    it('get a generated secret when none is given, returned once in the 201 answer and never again', async () => {
      const org = await newOrganization(t);
      const body = { url: URL_A, webhookTypes: ['nft'] };
      const created = await create(t, org.admin.key, body).expect(201);
      const secret: string = created.body.sharedSecret;
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      expect(Object.keys(created.body).sort()).toEqual([...ENDPOINT_KEYS, 'sharedSecret'].sort());
      const id = created.body.id;
      expect(openSecret((await storedEndpoint(t, id)).shared_secret_sealed, t.config.secretsEncryptionKey, org.id)).toBe(secret);

      const later = [
        await getOne(t, org.admin.key, id).expect(200),
        await list(t, org.admin.key).expect(200),
        await patch(t, org.admin.key, id, { description: 'x' }).expect(200),
        await t.http().get(AUDIT_PATH).set(bearer(org.admin.key)).expect(200),
      ];
      for (const res of later) {
        expect(res.text).not.toContain(secret);
        expect(res.body.sharedSecret).toBeUndefined();
      }
      for (const line of t.logs) expect(line).not.toContain(secret);
      // Two endpoints never get the same one.
      const other = await create(t, org.admin.key, body).expect(201);
      expect(other.body.sharedSecret).not.toBe(secret);
    });

    it('do not return the secret when the request gave one', async () => {
      const org = await newOrganization(t);
      const created = await create(t, org.admin.key, endpointBody()).expect(201);
      expect(created.body.sharedSecret).toBeUndefined();
    });

    it('replace their secret at once on PATCH, dropping a rotation in progress', async () => {
      const org = await newOrganization(t);
      const first = secretFor('first');
      const id = (await create(t, org.admin.key, endpointBody({ sharedSecret: first })).expect(201)).body.id;
      const rotated = await rotate(t, org.admin.key, id, { previousSecretValidSeconds: 3600 }).expect(200);
      expect((await getOne(t, org.admin.key, id).expect(200)).body.previousSecretExpiresAtUtc).toBe(
        rotated.body.previousSecretExpiresAtUtc,
      );
      const replacement = secretFor('replacement');
      const res = await patch(t, org.admin.key, id, { sharedSecret: replacement }).expect(200);
      expect(res.body.previousSecretExpiresAtUtc).toBeNull();
      const stored = await storedEndpoint(t, id);
      expect(stored.previous_shared_secret_sealed).toBeNull();
      expect(stored.previous_secret_expires_at).toBeNull();
      expect(openSecret(stored.shared_secret_sealed, t.config.secretsEncryptionKey, org.id)).toBe(replacement);
    });

    it('rotate their secret with an overlap: generated or given, the previous one kept until it expires', async () => {
      const org = await newOrganization(t);
      const first = secretFor('rot-1');
      const id = (await create(t, org.admin.key, endpointBody({ sharedSecret: first })).expect(201)).body.id;

      const generated = await rotate(t, org.admin.key, id).expect(200);
      expect(generated.body).toEqual({
        sharedSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        previousSecretExpiresAtUtc: expect.stringMatching(UTC_TIMESTAMP),
      });
      // The default window is a day.
      const expiresIn = Date.parse(generated.body.previousSecretExpiresAtUtc) - Date.now();
      expect(expiresIn).toBeGreaterThan(86_000_000);
      expect(expiresIn).toBeLessThanOrEqual(86_400_000);
      let stored = await storedEndpoint(t, id);
      const keyring = t.config.secretsEncryptionKey;
      expect(openSecret(stored.shared_secret_sealed, keyring, org.id)).toBe(generated.body.sharedSecret);
      expect(openSecret(stored.previous_shared_secret_sealed!, keyring, org.id)).toBe(first);
      expect((await getOne(t, org.admin.key, id).expect(200)).body.previousSecretExpiresAtUtc).toBe(
        generated.body.previousSecretExpiresAtUtc,
      );

      const given = secretFor('rot-2');
      const res = await rotate(t, org.admin.key, id, { sharedSecret: given, previousSecretValidSeconds: 0 }).expect(200);
      expect(res.body).toEqual({ previousSecretExpiresAtUtc: expect.stringMatching(UTC_TIMESTAMP) });
      stored = await storedEndpoint(t, id);
      expect(openSecret(stored.shared_secret_sealed, keyring, org.id)).toBe(given);
      expect(stored.previous_shared_secret_sealed).toBeNull();
      expect((await getOne(t, org.admin.key, id).expect(200)).body.previousSecretExpiresAtUtc).toBeNull();

      for (const body of [{ previousSecretValidSeconds: 604_801 }, { sharedSecret: 'short' }, { unknown: 1 }]) {
        expectProblem(await rotate(t, org.admin.key, id, body), 400, 'VALIDATION_FAILED');
      }
    });

    it('lose their expired previous secrets to the cleanup, like the configuration', async () => {
      const org = await newOrganization(t);
      const id = (await create(t, org.admin.key, endpointBody()).expect(201)).body.id;
      const rotated = await rotate(t, org.admin.key, id, { previousSecretValidSeconds: 60 }).expect(200);
      const service = t.app.get(WebhookEndpointsService);
      // Not yet expired: kept.
      await service.eraseExpiredPreviousSecrets(new Date());
      expect((await storedEndpoint(t, id)).previous_shared_secret_sealed).not.toBeNull();
      const erased = await service.eraseExpiredPreviousSecrets(new Date(Date.parse(rotated.body.previousSecretExpiresAtUtc) + 1));
      expect(erased).toBeGreaterThanOrEqual(1);
      const stored = await storedEndpoint(t, id);
      expect(stored.previous_shared_secret_sealed).toBeNull();
      expect(stored.previous_secret_expires_at).toBeNull();
      expect(stored.shared_secret_sealed).toMatch(/^v2\./);
    });
  });

  describe('validation', () => {
    let org: Org;
    let id: string;
    beforeAll(async () => {
      org = await newOrganization(t);
      id = (await create(t, org.admin.key, endpointBody()).expect(201)).body.id;
    });

    const addresses = (n: number) => Array.from({ length: n }, () => newAddress());

    it.each([
      ['a missing url', { url: undefined }, 'url', 'VALIDATION_FAILED'],
      ['a null url', { url: null }, 'url', 'VALIDATION_FAILED'],
      ['an ftp url', { url: 'ftp://127.0.0.1/hooks' }, 'url', 'VALIDATION_FAILED'],
      ['a relative url', { url: '/hooks' }, 'url', 'VALIDATION_FAILED'],
      ['a url with credentials', { url: 'http://user:pass@127.0.0.1/hooks' }, 'url', 'VALIDATION_FAILED'],
      ['a url whose host does not resolve', { url: 'http://no-such-host.invalid/hooks' }, 'url', 'VALIDATION_FAILED'],
      ['a url of 2,049 characters', { url: `http://127.0.0.1/${'a'.repeat(2049 - 17)}` }, 'url', 'VALIDATION_FAILED'],
      ['missing webhook types', { webhookTypes: undefined }, 'webhookTypes', 'VALIDATION_FAILED'],
      ['an unknown webhook type', { webhookTypes: ['nft', 'sms'] }, 'webhookTypes', 'VALIDATION_FAILED'],
      ['duplicate webhook types', { webhookTypes: ['nft', 'nft'] }, 'webhookTypes', 'VALIDATION_FAILED'],
      ['a secret of 15 characters', { sharedSecret: 's'.repeat(15) }, 'sharedSecret', 'VALIDATION_FAILED'],
      ['a null secret', { sharedSecret: null }, 'sharedSecret', 'VALIDATION_FAILED'],
      ['enabled that is not a boolean', { enabled: 'yes' }, 'enabled', 'VALIDATION_FAILED'],
      ['a description of 501 characters', { description: 'd'.repeat(501) }, 'description', 'VALIDATION_FAILED'],
      ['filters that are not an object', { filters: [CONTRACT_1] }, 'filters', 'VALIDATION_FAILED'],
      ['no contract address', { filters: { contractAddresses: [] } }, 'filters.contractAddresses', 'VALIDATION_FAILED'],
      ['1,001 contract addresses', { filters: { contractAddresses: addresses(1001) } }, 'filters.contractAddresses', 'VALIDATION_FAILED'],
      [
        'a contract address with a bad checksum',
        { filters: { contractAddresses: [CONTRACT_1.replace('a', 'A')] } },
        'filters.contractAddresses[0]',
        'INVALID_ADDRESS',
      ],
      [
        'a contract address that is not one',
        { filters: { contractAddresses: [CONTRACT_2, '0x1234'] } },
        'filters.contractAddresses[1]',
        'INVALID_ADDRESS',
      ],
      ['an unknown field in filters', { filters: { contractAddress: CONTRACT_1 } }, 'filters.contractAddress', 'VALIDATION_FAILED'],
      ['an unknown field', { callbackUrl: URL_A }, 'callbackUrl', 'VALIDATION_FAILED'],
      ['a read-only field', { isDefault: true }, 'isDefault', 'VALIDATION_FAILED'],
    ])('refuses %s on POST with a 400 naming the field, and adds nothing', async (_, overrides, field, code) => {
      const res = await create(t, org.admin.key, endpointBody(overrides));
      expectProblem(res, 400, code);
      expect(fieldsOf(res)).toContain(field);
      expect((await list(t, org.admin.key).expect(200)).body.endpoints).toHaveLength(2);
    });

    it('explains a url refusal as webhook-config does', async () => {
      const res = await create(t, org.admin.key, endpointBody({ url: 'http://a:b@127.0.0.1/' })).expect(400);
      expect(res.body.errors).toEqual([{ field: 'url', message: 'url must not contain credentials (user:password@)' }]);
    });

    it('accepts the boundaries: 1 and 1,000 contract addresses, a 500 character description', async () => {
      const many = addresses(1000);
      const res = await patch(t, org.admin.key, id, { description: 'd'.repeat(500), filters: { contractAddresses: many } }).expect(200);
      expect(res.body.filters.contractAddresses).toHaveLength(1000);
      expect(res.body.filters.contractAddresses).toEqual([...many].sort().map((a) => getAddress(a)));
      const one = await patch(t, org.admin.key, id, {
        filters: { contractAddresses: [CONTRACT_1.toUpperCase().replace('0X', '0x')] },
      }).expect(200);
      expect(one.body.filters.contractAddresses).toEqual([CONTRACT_1]);
    });

    it.each([
      ['a null url', { url: null }, 'url'],
      ['a url the policy refuses', { url: 'ftp://127.0.0.1/' }, 'url'],
      ['a null secret', { sharedSecret: null }, 'sharedSecret'],
      ['null webhook types', { webhookTypes: null }, 'webhookTypes'],
      [
        'a contract address with a bad checksum',
        { filters: { contractAddresses: [CONTRACT_2.replace('B', 'b')] } },
        'filters.contractAddresses[0]',
      ],
      ['an unknown field', { id: UNKNOWN_ID }, 'id'],
    ])('refuses %s on PATCH with a 400, and changes nothing', async (_, body, field) => {
      const before = (await getOne(t, org.admin.key, id).expect(200)).body;
      const res = await patch(t, org.admin.key, id, body);
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toContain(field);
      expect((await getOne(t, org.admin.key, id).expect(200)).body).toEqual(before);
    });

    it('refuses a path id that is not a UUID with 400 INVALID_PATH_PARAMETER', async () => {
      for (const res of [
        await getOne(t, org.admin.key, 'not-a-uuid'),
        await patch(t, org.admin.key, '123', {}),
        await remove(t, org.admin.key, 'x'),
        await rotate(t, org.admin.key, `${id}0`),
      ]) {
        expectProblem(res, 400, 'INVALID_PATH_PARAMETER');
        expect(fieldsOf(res)).toEqual(['endpointId']);
      }
    });

    it('refuses a page key it did not make, and a page size out of range', async () => {
      expectProblem(await list(t, org.admin.key, { pageKey: 'abc' }), 400, 'INVALID_PAGE_KEY');
      expectProblem(await list(t, org.admin.key, { pageSize: 0 }), 400, 'VALIDATION_FAILED');
      expectProblem(await list(t, org.admin.key, { pageSize: 1001 }), 400, 'VALIDATION_FAILED');
    });
  });

  describe('pages', () => {
    it('walk the default endpoint then the others in creation order, without gaps or repeats', async () => {
      const org = await newOrganization(t);
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) ids.push((await create(t, org.admin.key, endpointBody({ description: `n${i}` })).expect(201)).body.id);
      for (const pageSize of [1, 2, 3, 5, 6]) {
        const seen: string[] = [];
        let pageKey: string | undefined;
        let pages = 0;
        do {
          const res = await list(t, org.admin.key, { pageSize, ...(pageKey ? { pageKey } : {}) }).expect(200);
          expect(res.body.endpoints.length).toBeLessThanOrEqual(pageSize);
          seen.push(...res.body.endpoints.map((e: { id: string }) => e.id));
          pageKey = res.body.nextPageKey ?? undefined;
          pages += 1;
        } while (pageKey);
        expect(seen).toEqual([org.id, ...ids]);
        // A full last page knows it is the last: no empty page after it.
        expect(pages).toBe(Math.ceil(5 / pageSize));
      }
    });
  });

  describe('limit', () => {
    it('is 20 endpoints with the default one: the 20th other is 422 ENDPOINT_LIMIT_REACHED until one is deleted', async () => {
      const org = await newOrganization(t);
      const ids: string[] = [];
      for (let i = 0; i < 19; i += 1) ids.push((await create(t, org.admin.key, endpointBody()).expect(201)).body.id);
      const res = await create(t, org.admin.key, endpointBody());
      expectProblem(res, 422, 'ENDPOINT_LIMIT_REACHED');
      expect(res.body.detail).toMatch(/20/);
      expect((await list(t, org.admin.key, { pageSize: 100 }).expect(200)).body.endpoints).toHaveLength(20);
      await remove(t, org.admin.key, ids[3]).expect(204);
      await create(t, org.admin.key, endpointBody()).expect(201);
      expectProblem(await create(t, org.admin.key, endpointBody()), 422, 'ENDPOINT_LIMIT_REACHED');
      expect((await auditEntries(t, org, 'webhookEndpoint.create')).length).toBe(20);
    });

    it('holds under concurrent creations', async () => {
      const org = await newOrganization(t);
      for (let i = 0; i < 15; i += 1) await create(t, org.admin.key, endpointBody()).expect(201);
      const results = await Promise.all(Array.from({ length: 10 }, () => create(t, org.admin.key, endpointBody())));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 201, 201, 201, 422, 422, 422, 422, 422, 422]);
      for (const r of results.filter((r) => r.status === 422)) expectProblem(r, 422, 'ENDPOINT_LIMIT_REACHED');
      const [row] = await sql<{ n: string }>(
        t,
        'select count(*)::text as n from webhook_endpoint where organization_id = ? and not is_default',
        [org.id],
      );
      expect(row.n).toBe('19');
    });

    it("counts each organization's endpoints apart", async () => {
      const a = await newOrganization(t);
      const b = await newOrganization(t);
      for (let i = 0; i < 19; i += 1) await create(t, a.admin.key, endpointBody()).expect(201);
      await create(t, b.admin.key, endpointBody()).expect(201);
    });
  });

  describe('access', () => {
    it("never shows or changes another organization's endpoints: 404 WEBHOOK_ENDPOINT_NOT_FOUND", async () => {
      const a = await newOrganization(t);
      const b = await newOrganization(t);
      const endpointA = (await create(t, a.admin.key, endpointBody()).expect(201)).body;
      for (const target of [endpointA.id, a.id, UNKNOWN_ID]) {
        expectProblem(await getOne(t, b.admin.key, target), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
        expectProblem(await patch(t, b.admin.key, target, { description: 'mine' }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
        expectProblem(await rotate(t, b.admin.key, target), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
        expectProblem(await remove(t, b.admin.key, target), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
      }
      const listed = await list(t, b.admin.key).expect(200);
      expect(listed.body.endpoints.map((e: { id: string }) => e.id)).toEqual([b.id]);
      expect(listed.text).not.toContain(a.id);
      expect((await getOne(t, a.admin.key, endpointA.id).expect(200)).body).toEqual(endpointA);
    });

    it('lets auditors read but not change anything (403); read and write keys get nothing', async () => {
      const org = await newOrganization(t);
      const endpoint = (await create(t, org.admin.key, endpointBody()).expect(201)).body;
      const auditor = await createApiKey(t, org.id, ['auditor']);
      expect((await list(t, auditor.key).expect(200)).body.endpoints.map((e: { id: string }) => e.id)).toEqual([org.id, endpoint.id]);
      expect((await getOne(t, auditor.key, endpoint.id).expect(200)).body).toEqual(endpoint);
      await getOne(t, auditor.key, org.id).expect(200);
      const changes = (key: string) => [
        create(t, key, endpointBody()),
        patch(t, key, endpoint.id, { enabled: false }),
        patch(t, key, org.id, { enabled: false }),
        remove(t, key, endpoint.id),
        rotate(t, key, endpoint.id),
      ];
      for (const res of await Promise.all(changes(auditor.key))) expectProblem(res, 403, 'FORBIDDEN');
      for (const roles of [['read'], ['write', 'read']] as const) {
        const key = (await createApiKey(t, org.id, [...roles])).key;
        expectProblem(await list(t, key), 403, 'FORBIDDEN');
        expectProblem(await getOne(t, key, endpoint.id), 403, 'FORBIDDEN');
        for (const res of await Promise.all(changes(key))) expectProblem(res, 403, 'FORBIDDEN');
      }
      expectProblem(await t.http().get(BASE), 401, 'UNAUTHENTICATED');
      expect((await getOne(t, org.admin.key, endpoint.id).expect(200)).body).toEqual(endpoint);
      expect((await list(t, org.admin.key).expect(200)).body.endpoints).toHaveLength(2);
    });
  });

  describe('audit log', () => {
    it('records create, update, rotateSecret and delete with the endpoint id, secrets redacted', async () => {
      const org = await newOrganization(t);
      const secret = secretFor('audit');
      const created = await create(
        t,
        org.admin.key,
        endpointBody({ sharedSecret: secret, description: 'first', filters: { contractAddresses: [CONTRACT_1.toLowerCase()] } }),
      )
        .set('x-request-id', 'endpoint-audit-create')
        .expect(201);
      const id = created.body.id;
      const replacement = secretFor('audit-2');
      await patch(t, org.admin.key, id, { description: 'second', sharedSecret: replacement, enabled: false }).expect(200);
      const rotated = await rotate(t, org.admin.key, id, { previousSecretValidSeconds: 120 }).expect(200);
      await remove(t, org.admin.key, id).expect(204);

      const entries = await auditEntries(t, org);
      expect(entries.map((e) => e.action)).toEqual([
        'webhookEndpoint.delete',
        'webhookEndpoint.rotateSecret',
        'webhookEndpoint.update',
        'webhookEndpoint.create',
      ]);
      const [deleted, rotation, update, creation] = entries;
      expect(creation).toEqual(
        expect.objectContaining({ apiKeyId: org.admin.id, keyPrefix: org.admin.keyPrefix, requestId: 'endpoint-audit-create' }),
      );
      expect(creation.changes).toEqual({
        endpointId: { from: null, to: id },
        url: { from: null, to: URL_A },
        description: { from: null, to: 'first' },
        enabled: { from: null, to: true },
        webhookTypes: { from: null, to: ['transaction', 'nft'] },
        contractAddresses: { from: null, to: [CONTRACT_1] },
        ordering: { from: null, to: 'none' },
        payload: { from: null, to: 'thin' },
        sharedSecret: { from: null, to: '[redacted]' },
      });
      expect(update.changes).toEqual({
        endpointId: { from: id, to: id },
        description: { from: 'first', to: 'second' },
        enabled: { from: true, to: false },
        sharedSecret: { from: '[redacted]', to: '[redacted]' },
      });
      expect(rotation.changes).toEqual({
        endpointId: { from: id, to: id },
        sharedSecret: { from: '[redacted]', to: '[redacted]' },
        previousSharedSecret: { from: null, to: '[redacted]' },
        previousSecretExpiresAtUtc: { from: null, to: rotated.body.previousSecretExpiresAtUtc },
      });
      expect(deleted.changes).toEqual(
        expect.objectContaining({
          endpointId: { from: id, to: null },
          url: { from: URL_A, to: null },
          sharedSecret: { from: '[redacted]', to: null },
          previousSharedSecret: { from: '[redacted]', to: null },
        }),
      );
      const text = (await t.http().get(AUDIT_PATH).set(bearer(org.admin.key)).query({ pageSize: 1000 }).expect(200)).text;
      for (const value of [secret, replacement, rotated.body.sharedSecret]) expect(text).not.toContain(value);
    });

    it('records nothing for a change that changes nothing or is refused', async () => {
      const org = await newOrganization(t);
      const id = (await create(t, org.admin.key, endpointBody({ description: 'same' })).expect(201)).body.id;
      await patch(t, org.admin.key, id, {}).expect(200);
      await patch(t, org.admin.key, id, { description: 'same', enabled: true, webhookTypes: ['transaction', 'nft'] }).expect(200);
      await patch(t, org.admin.key, id, { url: 'ftp://x/' }).expect(400);
      await remove(t, org.admin.key, org.id).expect(422);
      expect((await auditEntries(t, org)).map((e) => e.action)).toEqual(['webhookEndpoint.create']);
    });
  });

  describe('switching off failing endpoints (disableFailingEndpoints)', () => {
    it('switches off, with disabledReason "failing", only what is still on, and audits it with the system as actor', async () => {
      const org = await newOrganization(t);
      const other = await newOrganization(t);
      await patch(t, org.admin.key, org.id, { url: URL_A, sharedSecret: secretFor('default'), enabled: true }).expect(200);
      const on = (await create(t, org.admin.key, endpointBody()).expect(201)).body.id;
      const off = (await create(t, org.admin.key, endpointBody({ enabled: false })).expect(201)).body.id;
      const gone = (await create(t, org.admin.key, endpointBody()).expect(201)).body.id;
      await remove(t, org.admin.key, gone).expect(204);
      const foreign = (await create(t, other.admin.key, endpointBody()).expect(201)).body.id;
      const service = t.app.get(WebhookEndpointsService);
      const now = new Date();

      const disabled = await service.disableFailingEndpoints(
        [
          { organizationId: org.id, endpointId: org.id },
          { organizationId: org.id, endpointId: on },
          { organizationId: org.id, endpointId: on },
          { organizationId: org.id, endpointId: off },
          { organizationId: org.id, endpointId: gone },
          // Another organization's endpoint named with the wrong organization is left alone.
          { organizationId: org.id, endpointId: foreign },
          // An organization that never configured webhooks has nothing to switch off.
          { organizationId: other.id, endpointId: other.id },
        ],
        now,
      );
      expect(disabled).toEqual([
        { organizationId: org.id, endpointId: org.id },
        { organizationId: org.id, endpointId: on },
      ]);

      for (const id of [org.id, on]) {
        expect((await getOne(t, org.admin.key, id).expect(200)).body).toEqual(
          expect.objectContaining({ enabled: false, disabledReason: 'failing', updatedAtUtc: expect.stringMatching(UTC_TIMESTAMP) }),
        );
      }
      expect((await getOne(t, org.admin.key, off).expect(200)).body.disabledReason).toBeNull();
      expect((await getOne(t, other.admin.key, foreign).expect(200)).body).toEqual(
        expect.objectContaining({ enabled: true, disabledReason: null }),
      );
      // webhook-config shows the default endpoint off (its shape has no reason).
      expect((await t.http().get(CONFIG_PATH).set(bearer(org.admin.key)).expect(200)).body.enabled).toBe(false);

      const entries = await auditEntries(t, org, 'webhookEndpoint.autoDisable');
      expect(entries).toHaveLength(2);
      for (const entry of entries) {
        expect(entry).toEqual(expect.objectContaining({ apiKeyId: null, keyPrefix: 'system', requestId: null, ip: null }));
      }
      expect(entries.map((e) => e.changes).reverse()).toEqual([
        { endpointId: { from: org.id, to: org.id }, enabled: { from: true, to: false }, disabledReason: { from: null, to: 'failing' } },
        { endpointId: { from: on, to: on }, enabled: { from: true, to: false }, disabledReason: { from: null, to: 'failing' } },
      ]);
      expect(await auditEntries(t, other, 'webhookEndpoint.autoDisable')).toEqual([]);
      // The chain still verifies with the system's entries in it.
      expect((await t.http().get(`${AUDIT_PATH}/verify`).set(bearer(org.admin.key)).expect(200)).body.valid).toBe(true);

      // Again: nothing left to switch off.
      expect(
        await service.disableFailingEndpoints(
          [
            { organizationId: org.id, endpointId: on },
            { organizationId: org.id, endpointId: org.id },
          ],
          now,
        ),
      ).toEqual([]);
      expect(await auditEntries(t, org, 'webhookEndpoint.autoDisable')).toHaveLength(2);
    });

    it('leaves the reason to a change that does not set enabled, and clears it on any that does', async () => {
      const org = await newOrganization(t);
      await patch(t, org.admin.key, org.id, { url: URL_A, sharedSecret: secretFor('d'), enabled: true }).expect(200);
      const a = (await create(t, org.admin.key, endpointBody()).expect(201)).body.id;
      const b = (await create(t, org.admin.key, endpointBody()).expect(201)).body.id;
      const service = t.app.get(WebhookEndpointsService);
      const all = [org.id, a, b].map((endpointId) => ({ organizationId: org.id, endpointId }));
      expect(await service.disableFailingEndpoints(all, new Date())).toHaveLength(3);

      // Other fields: the reason stays.
      expect((await patch(t, org.admin.key, a, { description: 'still failing' }).expect(200)).body).toEqual(
        expect.objectContaining({ enabled: false, disabledReason: 'failing' }),
      );
      // Re-enabled by PATCH: the reason goes.
      const reenabled = await patch(t, org.admin.key, a, { enabled: true }).expect(200);
      expect(reenabled.body).toEqual(expect.objectContaining({ enabled: true, disabledReason: null }));
      // Switched off by hand: not the service's doing any more.
      expect((await patch(t, org.admin.key, b, { enabled: false }).expect(200)).body).toEqual(
        expect.objectContaining({ enabled: false, disabledReason: null }),
      );
      // The default endpoint follows the same rules, through webhook-config as well.
      expect((await patch(t, org.admin.key, org.id, { webhookTypes: ['nft'] }).expect(200)).body.disabledReason).toBe('failing');
      await t.http().patch(CONFIG_PATH).set(bearer(org.admin.key)).send({ enabled: true }).expect(200);
      expect((await getOne(t, org.admin.key, org.id).expect(200)).body).toEqual(
        expect.objectContaining({ enabled: true, disabledReason: null }),
      );

      const updates = await auditEntries(t, org, 'webhookEndpoint.update');
      expect(updates[1].changes).toEqual({
        endpointId: { from: a, to: a },
        enabled: { from: false, to: true },
        disabledReason: { from: 'failing', to: null },
      });
      const [configUpdate] = await auditEntries(t, org, 'webhookConfig.update');
      expect(configUpdate.changes).toEqual({ enabled: { from: false, to: true }, disabledReason: { from: 'failing', to: null } });
    });
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await t.http().get('/docs-json').expect(200)).body;
    expect(Object.keys(doc.paths[BASE]).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[`${BASE}/{endpointId}`]).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(doc.paths[`${BASE}/{endpointId}/rotate-secret`])).toEqual(['post']);
    expect(doc.paths[BASE].post.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths[BASE].get['x-required-roles']).toEqual(['admin', 'auditor']);
    expect(doc.paths[BASE].post['x-required-roles']).toEqual(['admin']);
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.WebhookEndpointDto.properties).sort()).toEqual(ENDPOINT_KEYS);
    expect(Object.keys(schemas.CreateWebhookEndpointDto.properties).sort()).toEqual([
      'auth',
      'description',
      'destination',
      'enabled',
      'filter',
      'filters',
      'headers',
      'maxInFlight',
      'ordering',
      'payload',
      'rateLimitPerSecond',
      'retrySchedule',
      'sharedSecret',
      'signing',
      'tls',
      'url',
      'webhookTypes',
    ]);
    // A broker endpoint has a destination instead of a url: only the types are always required.
    expect(schemas.CreateWebhookEndpointDto.required).toEqual(['webhookTypes']);
    expect(schemas.CreatedWebhookEndpointDto.properties.sharedSecret).toEqual(expect.objectContaining({ type: 'string' }));
    expect(schemas.UpdateWebhookEndpointDto.required ?? []).toEqual([]);
  });
});

describe('webhook endpoints on a strict deployment (https only, no private networks)', () => {
  let strict: TestApp;

  beforeAll(async () => {
    strict = await createTestApp({ WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
  });
  afterAll(async () => {
    await strict.close();
  });

  it('holds every endpoint to the webhook configuration url policy', async () => {
    const org = await newOrganization(strict);
    let res = await create(strict, org.admin.key, endpointBody({ url: 'http://93.184.216.34/hook' }));
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors).toEqual([{ field: 'url', message: 'url must use https' }]);
    res = await create(strict, org.admin.key, endpointBody({ url: 'https://127.0.0.1/hook' }));
    expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/private, loopback, link-local/) }]);
    const id = (await create(strict, org.admin.key, endpointBody({ url: 'https://93.184.216.34/hook' })).expect(201)).body.id;
    res = await patch(strict, org.admin.key, id, { url: 'https://localhost/hook' });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect((await getOne(strict, org.admin.key, id).expect(200)).body.url).toBe('https://93.184.216.34/hook');
  });
});
