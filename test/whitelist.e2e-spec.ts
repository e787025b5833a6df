import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const BASE = '/api/organization/v1/current-organization/nft-whitelist';
const AUDIT = '/api/organization/v1/current-organization/audit-log';

const newAddress = () => `0x${randomBytes(20).toString('hex')}`;
const upperHex = (address: string) => `0x${address.slice(2).toUpperCase()}`;
/** Flips the case of one letter of a checksummed address, which breaks its checksum. */
function wrongChecksum(address: string): string {
  const checksummed = getAddress(address);
  const i = [...checksummed].findIndex((c, index) => index > 1 && /[a-fA-F]/.test(c));
  const c = checksummed[i];
  return checksummed.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + checksummed.slice(i + 1);
}

interface WhitelistBody {
  enabled: boolean;
  contractAddresses: string[];
  nextPageKey: string | null;
}

describe('NFT contract whitelist management', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (org: TestOrganization, query: Record<string, unknown> = {}) => t.http().get(BASE).query(query).set(bearer(org.adminKey));
  const patch = (org: TestOrganization, body: unknown) =>
    t
      .http()
      .patch(BASE)
      .set(bearer(org.adminKey))
      .send(body as object);
  const add = (org: TestOrganization, body: unknown) =>
    t
      .http()
      .post(`${BASE}/contracts`)
      .set(bearer(org.adminKey))
      .send(body as object);
  const remove = (org: TestOrganization, address: string) => t.http().delete(`${BASE}/contracts/${address}`).set(bearer(org.adminKey));

  async function allAddresses(org: TestOrganization): Promise<string[]> {
    const res = await get(org, { pageSize: 1000 }).expect(200);
    expect(res.body.nextPageKey).toBeNull();
    return res.body.contractAddresses;
  }

  async function auditEntries(org: TestOrganization) {
    const res = await t.http().get(AUDIT).set(bearer(org.adminKey)).expect(200);
    return (res.body.entries as { action: string; changes: Record<string, { from: unknown; to: unknown }> }[]).filter((e) =>
      e.action.startsWith('nftWhitelist'),
    );
  }

  it('starts switched off and empty', async () => {
    const org = await createOrganization(t);
    const res = await get(org).expect(200);
    expect(res.body).toEqual({ enabled: false, contractAddresses: [], nextPageKey: null });
  });

  it('switches on and off, answering {enabled, contractCount}', async () => {
    const org = await createOrganization(t);
    const on = await patch(org, { enabled: true }).expect(200);
    expect(on.body).toEqual({ enabled: true, contractCount: 0 });
    expect((await get(org).expect(200)).body.enabled).toBe(true);

    await add(org, { contractAddresses: [newAddress(), newAddress()] }).expect(200);
    const off = await patch(org, { enabled: false }).expect(200);
    expect(off.body).toEqual({ enabled: false, contractCount: 2 });
    expect((await get(org).expect(200)).body.enabled).toBe(false);
  });

  it('adds addresses in any accepted form, stores each once and lists them in EIP-55 order by address', async () => {
    const org = await createOrganization(t);
    const [a, b, c] = [newAddress(), newAddress(), newAddress()];
    const res = await add(org, { contractAddresses: [getAddress(a), upperHex(b), c, a, upperHex(a), getAddress(c)] }).expect(200);
    expect(res.body).toEqual({ added: 3, contractCount: 3 });
    expect(await allAddresses(org)).toEqual([a, b, c].sort().map((x) => getAddress(x)));
  });

  it('is idempotent: addresses already present are counted as not added', async () => {
    const org = await createOrganization(t);
    const [a, b] = [newAddress(), newAddress()];
    await add(org, { contractAddresses: [a] }).expect(200);
    const again = await add(org, { contractAddresses: [upperHex(a), getAddress(a)] }).expect(200);
    expect(again.body).toEqual({ added: 0, contractCount: 1 });
    const mixed = await add(org, { contractAddresses: [getAddress(a), b] }).expect(200);
    expect(mixed.body).toEqual({ added: 1, contractCount: 2 });
    expect(await allAddresses(org)).toEqual([a, b].sort().map((x) => getAddress(x)));
  });

  it('rejects a batch with one bad address, naming it, and adds nothing from it', async () => {
    const org = await createOrganization(t);
    const existing = newAddress();
    await add(org, { contractAddresses: [existing] }).expect(200);
    const res = await add(org, { contractAddresses: [newAddress(), newAddress(), newAddress(), '0x12345', newAddress()] });
    expectProblem(res, 400, 'INVALID_ADDRESS');
    expect(res.body.errors).toEqual([{ field: 'contractAddresses[3]', message: expect.any(String) }]);
    expect(res.body.detail).toContain('contractAddresses[3]');
    expect(await allAddresses(org)).toEqual([getAddress(existing)]);
  });

  it('refuses a mixed-case address with a wrong checksum', async () => {
    const org = await createOrganization(t);
    const res = await add(org, { contractAddresses: [wrongChecksum(newAddress())] });
    expectProblem(res, 400, 'INVALID_ADDRESS');
    expect(res.body.errors).toEqual([{ field: 'contractAddresses[0]', message: expect.any(String) }]);
    expect(await allAddresses(org)).toEqual([]);
  });

  it.each([
    ['an empty list', { contractAddresses: [] }, 'contractAddresses'],
    ['more than 1,000 addresses', { contractAddresses: Array.from({ length: 1001 }, newAddress) }, 'contractAddresses'],
    ['no list', {}, 'contractAddresses'],
    ['a list that is not an array', { contractAddresses: '0x0000000000000000000000000000000000000001' }, 'contractAddresses'],
    ['an unknown field', { contractAddresses: [newAddress()], enabled: true }, 'enabled'],
  ])('answers 400 VALIDATION_FAILED for %s and adds nothing', async (_label, body, field) => {
    const org = await createOrganization(t);
    const res = await add(org, body);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await allAddresses(org)).toEqual([]);
  });

  it('names a non-string entry by its index', async () => {
    const org = await createOrganization(t);
    const res = await add(org, { contractAddresses: [newAddress(), 42] });
    expectProblem(res, 400, 'INVALID_ADDRESS');
    expect(res.body.errors).toEqual([{ field: 'contractAddresses[1]', message: expect.any(String) }]);
  });

  it('accepts exactly 1,000 addresses in one request', async () => {
    const org = await createOrganization(t);
    const addresses = Array.from({ length: 1000 }, newAddress);
    const res = await add(org, { contractAddresses: addresses }).expect(200);
    expect(res.body).toEqual({ added: 1000, contractCount: 1000 });
    expect(await allAddresses(org)).toEqual([...addresses].sort().map((x) => getAddress(x)));
  });

  it.each([
    ['no body', undefined],
    ['a string', { enabled: 'true' }],
    ['null', { enabled: null }],
    ['an unknown field', { enabled: true, contractAddresses: [] }],
  ])('refuses a PATCH with %s and leaves the switch as it was', async (_label, body) => {
    const org = await createOrganization(t);
    await patch(org, { enabled: true }).expect(200);
    const res = await patch(org, body);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect((await get(org).expect(200)).body.enabled).toBe(true);
  });

  describe('delete', () => {
    it('deletes an address given in any accepted form, then answers 404 CONTRACT_NOT_WHITELISTED', async () => {
      const org = await createOrganization(t);
      const [a, b, c] = [newAddress(), newAddress(), newAddress()];
      await add(org, { contractAddresses: [a, b, c] }).expect(200);
      await remove(org, upperHex(a)).expect(204);
      await remove(org, getAddress(b)).expect(204);
      expect(await allAddresses(org)).toEqual([getAddress(c)]);
      expectProblem(await remove(org, a), 404, 'CONTRACT_NOT_WHITELISTED');
      expectProblem(await remove(org, newAddress()), 404, 'CONTRACT_NOT_WHITELISTED');
      const patched = await patch(org, { enabled: false }).expect(200);
      expect(patched.body.contractCount).toBe(1);
    });

    it.each([
      ['too short', '0x1234'],
      ['not hex', `0x${'g'.repeat(40)}`],
      ['a wrong checksum', wrongChecksum(`0x${'ab'.repeat(20)}`)],
    ])('answers 400 for an address that is %s and deletes nothing', async (_label, bad) => {
      const org = await createOrganization(t);
      const kept = newAddress();
      await add(org, { contractAddresses: [kept] }).expect(200);
      const res = await remove(org, bad);
      expectProblem(res, 400, 'INVALID_ADDRESS');
      expect(res.body.errors).toEqual([{ field: 'contractAddress', message: expect.any(String) }]);
      expect(await allAddresses(org)).toEqual([getAddress(kept)]);
    });
  });

  it('pages the list by address with pageSize and pageKey, without repeats', async () => {
    const org = await createOrganization(t);
    const addresses = Array.from({ length: 25 }, newAddress);
    await add(org, { contractAddresses: addresses }).expect(200);
    const pages: string[][] = [];
    let pageKey: string | null = null;
    do {
      const res: { body: WhitelistBody } = await get(org, pageKey ? { pageSize: 10, pageKey } : { pageSize: 10 }).expect(200);
      pages.push(res.body.contractAddresses);
      pageKey = res.body.nextPageKey;
    } while (pageKey && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(pages.flat()).toEqual([...addresses].sort().map((x) => getAddress(x)));
  });

  it('keeps paging correctly when addresses are added and deleted between pages', async () => {
    const org = await createOrganization(t);
    const addresses = Array.from({ length: 6 }, newAddress).sort();
    await add(org, { contractAddresses: addresses }).expect(200);
    const first = await get(org, { pageSize: 3 }).expect(200);
    expect(first.body.contractAddresses).toEqual(addresses.slice(0, 3).map((x) => getAddress(x)));
    await remove(org, addresses[1]).expect(204);
    await remove(org, addresses[3]).expect(204);
    const second = await get(org, { pageSize: 3, pageKey: first.body.nextPageKey }).expect(200);
    expect(second.body.contractAddresses).toEqual([addresses[4], addresses[5]].map((x) => getAddress(x)));
    expect(second.body.nextPageKey).toBeNull();
  });

  it.each([
    ['made up', 'bm90LWEta2V5'],
    ['of another endpoint', Buffer.from(JSON.stringify(['0193a6c2-7d1e-7c3a-9f10-0a1b2c3d4e5f'])).toString('base64url')],
  ])('answers 400 INVALID_PAGE_KEY for a page key that is %s', async (_label, pageKey) => {
    const org = await createOrganization(t);
    expectProblem(await get(org, { pageKey }), 400, 'INVALID_PAGE_KEY');
  });

  it('answers 400 for a page size out of range', async () => {
    const org = await createOrganization(t);
    expectProblem(await get(org, { pageSize: 0 }), 400, 'VALIDATION_FAILED');
    expectProblem(await get(org, { pageSize: 1001 }), 400, 'VALIDATION_FAILED');
  });

  it("never shows or changes another organization's whitelist", async () => {
    const [orgA, orgB] = [await createOrganization(t), await createOrganization(t)];
    const a = newAddress();
    await patch(orgA, { enabled: true }).expect(200);
    await add(orgA, { contractAddresses: [a] }).expect(200);
    expect((await get(orgB).expect(200)).body).toEqual({ enabled: false, contractAddresses: [], nextPageKey: null });
    expectProblem(await remove(orgB, a), 404, 'CONTRACT_NOT_WHITELISTED');
    const addedByB = await add(orgB, { contractAddresses: [a] }).expect(200);
    expect(addedByB.body).toEqual({ added: 1, contractCount: 1 });
    await remove(orgB, a).expect(204);
    expect(await allAddresses(orgA)).toEqual([getAddress(a)]);
    expect((await get(orgA).expect(200)).body.enabled).toBe(true);
  });

  describe('access', () => {
    const routes: [string, (key: Record<string, string>) => Promise<{ status: number; headers: Record<string, string>; body: unknown }>][] =
      [
        ['GET', (h) => t.http().get(BASE).set(h)],
        ['PATCH', (h) => t.http().patch(BASE).set(h).send({ enabled: true })],
        [
          'POST contracts',
          (h) =>
            t
              .http()
              .post(`${BASE}/contracts`)
              .set(h)
              .send({ contractAddresses: [newAddress()] }),
        ],
        ['DELETE contract', (h) => t.http().delete(`${BASE}/contracts/${newAddress()}`).set(h)],
      ];

    it.each(routes)('%s answers 401 without a key or with an unknown one', async (_label, call) => {
      expectProblem(await call({}), 401, 'UNAUTHENTICATED');
      expectProblem(await call(bearer('nftw_not-a-real-key-000000000000000000000000000')), 401, 'INVALID_API_KEY');
    });

    it.each(routes)('%s answers 403 for read and write keys and changes nothing', async (_label, call) => {
      const org = await createOrganization(t);
      for (const roles of [['read'], ['write'], ['read', 'write']] as const) {
        const key = await createApiKey(t, org.id, [...roles]);
        expectProblem(await call(bearer(key.key)), 403, 'FORBIDDEN');
      }
      expect((await get(org).expect(200)).body).toEqual({ enabled: false, contractAddresses: [], nextPageKey: null });
    });
  });

  describe('audit log', () => {
    it('records every change with who made it, under which request, and what changed', async () => {
      const org = await createOrganization(t);
      const keyPrefix = org.adminKey.slice(0, 13);
      const keys = await t.http().get('/api/organization/v1/current-organization/api-keys').set(bearer(org.adminKey)).expect(200);
      const apiKeyId = keys.body.apiKeys.find((k: { keyPrefix: string }) => k.keyPrefix === keyPrefix).id;
      const [a, b] = [newAddress(), newAddress()].sort();
      await patch(org, { enabled: true }).set('x-request-id', 'wl-audit-1').expect(200);
      await add(org, { contractAddresses: [upperHex(a), b] })
        .set('x-request-id', 'wl-audit-2')
        .expect(200);
      await remove(org, a).set('x-request-id', 'wl-audit-3').expect(204);

      const entries = await auditEntries(org);
      expect(entries.slice(0, 3).reverse()).toEqual([
        expect.objectContaining({
          action: 'nftWhitelist.update',
          apiKeyId,
          keyPrefix,
          requestId: 'wl-audit-1',
          changes: { enabled: { from: false, to: true } },
        }),
        expect.objectContaining({
          action: 'nftWhitelist.contracts.add',
          apiKeyId,
          keyPrefix,
          requestId: 'wl-audit-2',
          changes: {
            contractAddresses: { from: null, to: [getAddress(a), getAddress(b)] },
            contractCount: { from: 0, to: 2 },
          },
        }),
        expect.objectContaining({
          action: 'nftWhitelist.contracts.delete',
          apiKeyId,
          keyPrefix,
          requestId: 'wl-audit-3',
          changes: { contractAddress: { from: getAddress(a), to: null }, contractCount: { from: 2, to: 1 } },
        }),
      ]);
      expect(entries).toHaveLength(3);
    });

    it('lists only the addresses an add actually added', async () => {
      const org = await createOrganization(t);
      const [a, b] = [newAddress(), newAddress()];
      await add(org, { contractAddresses: [a] }).expect(200);
      await add(org, { contractAddresses: [a, b] }).expect(200);
      const [latest] = await auditEntries(org);
      expect(latest.changes.contractAddresses).toEqual({ from: null, to: [getAddress(b)] });
    });

    it('records nothing for a request that was refused', async () => {
      const org = await createOrganization(t);
      await add(org, { contractAddresses: ['0x1'] }).expect(400);
      await remove(org, newAddress()).expect(404);
      await patch(org, { enabled: 'on' }).expect(400);
      expect(await auditEntries(org)).toEqual([]);
    });
  });
});

describe('NFT contract whitelist size limit', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ WHITELIST_MAX_CONTRACTS: '5' });
  });
  afterAll(async () => {
    await t.close();
  });

  const add = (org: TestOrganization, contractAddresses: string[]) =>
    t.http().post(`${BASE}/contracts`).set(bearer(org.adminKey)).send({ contractAddresses });
  const count = async (org: TestOrganization) =>
    (await t.http().get(BASE).set(bearer(org.adminKey)).expect(200)).body.contractAddresses.length as number;

  it('answers 422 WHITELIST_FULL for an add that would exceed the limit, and adds nothing from it', async () => {
    const org = await createOrganization(t);
    const first = Array.from({ length: 3 }, newAddress);
    await add(org, first).expect(200);

    const tooMany = await add(org, Array.from({ length: 3 }, newAddress));
    expectProblem(tooMany, 422, 'WHITELIST_FULL');
    expect(await count(org)).toBe(3);

    const fill = await add(org, [first[0], newAddress(), newAddress()]).expect(200);
    expect(fill.body).toEqual({ added: 2, contractCount: 5 });

    const alreadyThere = await add(org, [upperHex(first[1])]).expect(200);
    expect(alreadyThere.body).toEqual({ added: 0, contractCount: 5 });

    expectProblem(await add(org, [newAddress()]), 422, 'WHITELIST_FULL');
    expect(await count(org)).toBe(5);
  });

  it('frees room when a contract is deleted', async () => {
    const org = await createOrganization(t);
    const addresses = Array.from({ length: 5 }, newAddress);
    await add(org, addresses).expect(200);
    await t.http().delete(`${BASE}/contracts/${addresses[0]}`).set(bearer(org.adminKey)).expect(204);
    expect((await add(org, [newAddress()]).expect(200)).body).toEqual({ added: 1, contractCount: 5 });
  });

  it('holds under concurrent adds: the whitelist never grows past the limit', async () => {
    const org = await createOrganization(t);
    const batches = Array.from({ length: 6 }, () => [newAddress(), newAddress()]);
    const results = await Promise.all(batches.map((batch) => add(org, batch)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 422, 422, 422, 422]);
    expect(await count(org)).toBe(4);
  });

  it('still accepts an add of nothing new after the limit was lowered below the current size', async () => {
    const org = await createOrganization(t);
    const addresses = Array.from({ length: 7 }, newAddress);
    const unlimited = await createTestApp();
    try {
      await unlimited.http().post(`${BASE}/contracts`).set(bearer(org.adminKey)).send({ contractAddresses: addresses }).expect(200);
    } finally {
      await unlimited.close();
    }
    expect((await add(org, [addresses[0]]).expect(200)).body).toEqual({ added: 0, contractCount: 7 });
    expectProblem(await add(org, [addresses[1], newAddress()]), 422, 'WHITELIST_FULL');
    expect(await count(org)).toBe(7);
  });

  it('counts the limit per organization', async () => {
    const [orgA, orgB] = [await createOrganization(t), await createOrganization(t)];
    await add(orgA, Array.from({ length: 5 }, newAddress)).expect(200);
    await add(orgB, Array.from({ length: 5 }, newAddress)).expect(200);
  });
});
