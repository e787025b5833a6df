import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { checksum, eventsFor, newAddress, nftApi, UNKNOWN_ID, UTC_TIMESTAMP, UUID_V7 } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

describe('wallets: POST /v1/wallets, GET /v1/wallets, GET /v1/wallets/{walletId}', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a wallet and answers {id, organizationId, name, address, createdAtUtc}', async () => {
    const address = newAddress();
    const res = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'Alice', address }).expect(201);
    expect(Object.keys(res.body).sort()).toEqual(['address', 'createdAtUtc', 'id', 'name', 'organizationId']);
    expect(res.body.id).toMatch(UUID_V7);
    expect(res.body.organizationId).toBe(org.id);
    expect(res.body.name).toBe('Alice');
    expect(res.body.address).toBe(checksum(address));
    expect(res.body.createdAtUtc).toMatch(UTC_TIMESTAMP);

    const fetched = await t.http().get(`/v1/wallets/${res.body.id}`).set(bearer(org.adminKey)).expect(200);
    expect(fetched.body).toEqual(res.body);
  });

  it('name and address are optional and null when absent', async () => {
    const res = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({}).expect(201);
    expect(res.body.name).toBeNull();
    expect(res.body.address).toBeNull();
  });

  it('accepts an address in upper case or EIP-55 and always answers EIP-55', async () => {
    const address = newAddress();
    const upper = `0x${address.slice(2).toUpperCase()}`;
    const a = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ address: upper }).expect(201);
    const b = await t
      .http()
      .post('/v1/wallets')
      .set(bearer(org.adminKey))
      .send({ address: checksum(address) })
      .expect(201);
    expect(a.body.address).toBe(checksum(address));
    expect(b.body.address).toBe(checksum(address));
  });

  it('400 for a mixed-case address with a wrong checksum, a malformed address, a bad name or unknown fields', async () => {
    const good = checksum('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
    const wrongChecksum = good.slice(0, -1) + (good.endsWith('d') ? 'D' : 'd');
    const api = t.http();
    const bad = await api.post('/v1/wallets').set(bearer(org.adminKey)).send({ address: wrongChecksum });
    expectProblem(bad, 400, 'INVALID_ADDRESS');
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'address' })]);

    const malformed = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ address: '0x1234', name: 7, extra: 1 });
    expectProblem(malformed, 400, 'VALIDATION_FAILED');
    expect([...new Set(malformed.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual(['address', 'extra', 'name']);
  });

  it('400 INVALID_ADDRESS naming address for the zero address (in every accepted form); nothing is created', async () => {
    const before = await t.http().get('/v1/wallets?pageSize=1000').set(bearer(org.adminKey)).expect(200);
    // The zero address has no hex letters: its lowercase, uppercase and EIP-55 forms are one text.
    const zero = '0x0000000000000000000000000000000000000000';
    expect(new Set([zero, `0x${zero.slice(2).toUpperCase()}`, checksum(zero)])).toEqual(new Set([zero]));
    const res = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'nobody', address: zero });
    expectProblem(res, 400, 'INVALID_ADDRESS');
    expect(res.body.errors).toEqual([{ field: 'address', message: expect.stringContaining('zero address') }]);
    const after = await t.http().get('/v1/wallets?pageSize=1000').set(bearer(org.adminKey)).expect(200);
    expect(after.body.wallets).toEqual(before.body.wallets);
  });

  it('emits custodialAccount / Wallet / create with the wallet', async () => {
    const wallet = await nftApi(t, org.adminKey).wallet();
    const events = await eventsFor(t, wallet.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual(
      expect.objectContaining({
        organization_id: org.id,
        webhook_type: 'custodialAccount',
        resource_type: 'Wallet',
        resource_id: wallet.id,
        action: 'create',
        changes: null,
      }),
    );
  });

  it('lists wallets oldest first, page by page, without repeats', async () => {
    const own = await createOrganization(t);
    const api = nftApi(t, own.adminKey);
    const created: string[] = [];
    for (let i = 0; i < 5; i += 1) created.push((await api.wallet({ name: `w${i}` })).id);

    const seen: string[] = [];
    let pageKey: string | null = null;
    let pages = 0;
    do {
      const res: { body: { wallets: { id: string; organizationId: string }[]; nextPageKey: string | null } } = await t
        .http()
        .get('/v1/wallets')
        .query(pageKey ? { pageSize: 2, pageKey } : { pageSize: 2 })
        .set(bearer(own.adminKey))
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['nextPageKey', 'wallets']);
      expect(res.body.wallets.length).toBeLessThanOrEqual(2);
      expect(res.body.wallets.every((w) => w.organizationId === own.id)).toBe(true);
      seen.push(...res.body.wallets.map((w) => w.id));
      pageKey = res.body.nextPageKey;
      pages += 1;
    } while (pageKey);
    expect(seen).toEqual(created);
    expect(pages).toBe(3);
  });

  it('finds the wallets at an address (any accepted case), only its own organization’s', async () => {
    const address = newAddress();
    const first = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'A', address }).expect(201);
    const second = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'B', address }).expect(201);
    await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'elsewhere', address: newAddress() }).expect(201);
    const other = await createOrganization(t);
    await t.http().post('/v1/wallets').set(bearer(other.adminKey)).send({ address }).expect(201);
    for (const form of [address, checksum(address), `0x${address.slice(2).toUpperCase()}`]) {
      const res = await t.http().get('/v1/wallets').query({ address: form }).set(bearer(org.adminKey)).expect(200);
      expect(res.body).toEqual({ wallets: [first.body, second.body], nextPageKey: null });
    }
    const paged = await t.http().get('/v1/wallets').query({ address, pageSize: 1 }).set(bearer(org.adminKey)).expect(200);
    expect(paged.body.wallets).toEqual([first.body]);
    const rest = await t
      .http()
      .get('/v1/wallets')
      .query({ address, pageSize: 1, pageKey: paged.body.nextPageKey })
      .set(bearer(org.adminKey));
    expect(rest.body.wallets).toEqual([second.body]);
    expect((await t.http().get('/v1/wallets').query({ address: newAddress() }).set(bearer(org.adminKey)).expect(200)).body.wallets).toEqual(
      [],
    );
    const wrongChecksum = checksum(address)
      .replace(/[a-f]/, (c) => c.toUpperCase())
      .replace(/[A-F](?=[^A-F]*$)/, (c) => c.toLowerCase());
    for (const bad of ['0x1234', 'not an address', wrongChecksum === checksum(address) ? '0xZZ' : wrongChecksum]) {
      expectProblem(await t.http().get('/v1/wallets').query({ address: bad }).set(bearer(org.adminKey)), 400, 'INVALID_ADDRESS');
    }
  });

  it('400 for bad paging and a path id that is not a UUID', async () => {
    expectProblem(await t.http().get('/v1/wallets?pageSize=0').set(bearer(org.adminKey)), 400, 'VALIDATION_FAILED');
    expectProblem(await t.http().get('/v1/wallets?pageKey=nope!').set(bearer(org.adminKey)), 400, 'INVALID_PAGE_KEY');
    expectProblem(await t.http().get('/v1/wallets/not-a-uuid').set(bearer(org.adminKey)), 400, 'INVALID_PATH_PARAMETER');
  });

  it('404 WALLET_NOT_FOUND for an unknown wallet', async () => {
    expectProblem(await t.http().get(`/v1/wallets/${UNKNOWN_ID}`).set(bearer(org.adminKey)), 404, 'WALLET_NOT_FOUND');
  });

  it("never shows another organization's wallets: 404 like an unknown id, and absent from the list", async () => {
    const other = await createOrganization(t);
    const theirs = await nftApi(t, other.adminKey).wallet({ name: 'theirs' });
    const res = await t.http().get(`/v1/wallets/${theirs.id}`).set(bearer(org.adminKey));
    expectProblem(res, 404, 'WALLET_NOT_FOUND');
    const list = await t.http().get('/v1/wallets').query({ pageSize: 1000 }).set(bearer(org.adminKey)).expect(200);
    expect(list.body.wallets.map((w: { id: string }) => w.id)).not.toContain(theirs.id);
  });

  it('roles: read lists and gets, only write creates; no key is a 401', async () => {
    const reader = await createApiKey(t, org.id, ['read']);
    const writer = await createApiKey(t, org.id, ['write']);
    expectProblem(await t.http().post('/v1/wallets').set(bearer(reader.key)).send({}), 403, 'FORBIDDEN');
    const created = await t.http().post('/v1/wallets').set(bearer(writer.key)).send({}).expect(201);
    await t.http().get(`/v1/wallets/${created.body.id}`).set(bearer(reader.key)).expect(200);
    await t.http().get('/v1/wallets').set(bearer(reader.key)).expect(200);
    expectProblem(await t.http().get(`/v1/wallets/${created.body.id}`).set(bearer(writer.key)), 403, 'FORBIDDEN');
    expectProblem(await t.http().get('/v1/wallets'), 401, 'UNAUTHENTICATED');
    expectProblem(await t.http().post('/v1/wallets').send({}), 401, 'UNAUTHENTICATED');
  });
});
