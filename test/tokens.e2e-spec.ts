import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import {
  checksum,
  eventCount,
  eventsFor,
  METADATA_KEYS,
  newAddress,
  nextBlockchainTokenId,
  nftApi,
  sql,
  UNKNOWN_ID,
  UUID_V7,
} from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

const PENDING_MEDIA = { status: 'pending', error: null, width: null, height: null, contentType: null, sha256: null, thumbnails: null };
const UINT256_MAX = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

const FULL_METADATA = {
  name: 'Genesis #1',
  description: 'The first one',
  image: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/1.png',
  animationUrl: 'https://cdn.example.com/1.mp4',
  externalUrl: 'https://example.com/nft/1',
  backgroundColor: 'ffffff',
  editionId: 1,
  totalEdition: 10,
  creatorName: 'Ada',
  creatorImageUrl: 'ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U',
  creatorExternalPageUrl: 'data:text/html;base64,PGgxPkFkYTwvaDE+',
};

describe('tokens: POST /v1/tokens, GET /v1/tokens/{tokenId}, PATCH /v1/tokens/{tokenId}', () => {
  let t: TestApp;
  let org: TestOrganization;
  let writer: string;
  let reader: string;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    writer = (await createApiKey(t, org.id, ['write'])).key;
    reader = (await createApiKey(t, org.id, ['read'])).key;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: Record<string, unknown>, key = writer) => t.http().post('/v1/tokens').set(bearer(key)).send(body);
  const get = (tokenId: string, key = reader) => t.http().get(`/v1/tokens/${tokenId}`).set(bearer(key));
  const patch = (tokenId: string, body: unknown, key = writer) =>
    t
      .http()
      .patch(`/v1/tokens/${tokenId}`)
      .set(bearer(key))
      .send(body as object);

  describe('create and read', () => {
    it('creates a token and answers the documented token shape with every metadata field, field by field', async () => {
      const contract = newAddress();
      const res = await post({ contractAddress: contract, blockchainTokenId: '42', metadata: FULL_METADATA }).expect(201);
      expect(Object.keys(res.body).sort()).toEqual([
        'blockchainTokenId',
        'chainId',
        'contractAddress',
        'id',
        'media',
        'metadata',
        'metadataError',
        'metadataStatus',
        'organizationId',
        'spam',
      ]);
      expect(res.body).toEqual(expect.objectContaining({ chainId: null, metadataStatus: 'ok', metadataError: null }));
      expect(res.body.id).toMatch(UUID_V7);
      expect(res.body.organizationId).toBe(org.id);
      expect(res.body.contractAddress).toBe(checksum(contract));
      expect(res.body.blockchainTokenId).toBe('42');
      expect(Object.keys(res.body.metadata).sort()).toEqual([...METADATA_KEYS].sort());
      expect(res.body.metadata).toEqual(FULL_METADATA);
      expect(typeof res.body.metadata.editionId).toBe('number');
      expect(typeof res.body.metadata.totalEdition).toBe('number');

      // The image is fetched in the background (test/media.e2e-spec.ts): the write answers it pending.
      expect(res.body.media).toEqual(PENDING_MEDIA);
      const fetched = await get(res.body.id).expect(200);
      expect({ ...fetched.body, media: null }).toEqual({ ...res.body, media: null });
    });

    it('answers every metadata key, null when never set', async () => {
      const bare = await post({ contractAddress: newAddress(), blockchainTokenId: '1' }).expect(201);
      expect(bare.body.metadata).toEqual(Object.fromEntries(METADATA_KEYS.map((k) => [k, null])));
      const explicitNull = await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: null }).expect(201);
      expect(explicitNull.body.metadata).toEqual(bare.body.metadata);
      const partial = await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: { name: 'Only name' } }).expect(201);
      expect(Object.keys(partial.body.metadata).sort()).toEqual([...METADATA_KEYS].sort());
      expect(partial.body.metadata.name).toBe('Only name');
      expect(partial.body.metadata.image).toBeNull();
      const fetched = await get(partial.body.id).expect(200);
      expect(fetched.body.metadata).toEqual(partial.body.metadata);
    });

    it('stores the contract address lowercase whatever case it came in, and answers EIP-55', async () => {
      const contract = newAddress();
      const upper = `0x${contract.slice(2).toUpperCase()}`;
      const res = await post({ contractAddress: upper, blockchainTokenId: '7' }).expect(201);
      expect(res.body.contractAddress).toBe(checksum(contract));
      const [row] = await sql<{ contract_address: string }>(t, 'select contract_address from token where id = ?', [res.body.id]);
      expect(row.contract_address).toBe(contract);
    });

    it('accepts blockchainTokenId from 0 to 2^256-1 and answers it unchanged', async () => {
      const zero = await post({ contractAddress: newAddress(), blockchainTokenId: '0' }).expect(201);
      expect(zero.body.blockchainTokenId).toBe('0');
      const max = await post({ contractAddress: newAddress(), blockchainTokenId: UINT256_MAX }).expect(201);
      expect(max.body.blockchainTokenId).toBe(UINT256_MAX);
      expect((await get(max.body.id).expect(200)).body.blockchainTokenId).toBe(UINT256_MAX);
    });

    it.each([
      [
        '2^256',
        { blockchainTokenId: '115792089237316195423570985008687907853269984665640564039457584007913129639936' },
        'blockchainTokenId',
      ],
      ['a leading zero', { blockchainTokenId: '042' }, 'blockchainTokenId'],
      ['a negative id', { blockchainTokenId: '-1' }, 'blockchainTokenId'],
      ['a number instead of a string', { blockchainTokenId: 42 }, 'blockchainTokenId'],
      ['a missing id', { blockchainTokenId: undefined }, 'blockchainTokenId'],
      ['a short address', { contractAddress: '0x1234' }, 'contractAddress'],
      ['a javascript: image', { metadata: { image: 'javascript:alert(1)' } }, 'metadata.image'],
      ['a relative animationUrl', { metadata: { animationUrl: '/a.mp4' } }, 'metadata.animationUrl'],
      ['an ftp externalUrl', { metadata: { externalUrl: 'ftp://example.com/x' } }, 'metadata.externalUrl'],
      ['a file: creatorImageUrl', { metadata: { creatorImageUrl: 'file:///etc/passwd' } }, 'metadata.creatorImageUrl'],
      ['an empty creatorExternalPageUrl', { metadata: { creatorExternalPageUrl: '' } }, 'metadata.creatorExternalPageUrl'],
      ['a name of 2,049 characters', { metadata: { name: 'x'.repeat(2049) } }, 'metadata.name'],
      ['a URL of 2,049 characters', { metadata: { image: `https://example.com/${'a'.repeat(2029)}` } }, 'metadata.image'],
      ['a negative editionId', { metadata: { editionId: -1 } }, 'metadata.editionId'],
      ['a fractional totalEdition', { metadata: { totalEdition: 1.5 } }, 'metadata.totalEdition'],
      ['an editionId as a string', { metadata: { editionId: '3' } }, 'metadata.editionId'],
      ['a description that is not a string', { metadata: { description: 5 } }, 'metadata.description'],
      ['an unknown metadata field', { metadata: { rarity: 'legendary' } }, 'metadata.rarity'],
      ['an unknown top-level field', { owner: 'me' }, 'owner'],
      ['metadata that is not an object', { metadata: 'name' }, 'metadata'],
    ])('400 VALIDATION_FAILED for %s, naming the field', async (_label, override, field) => {
      const before = await eventCount(t, org.id);
      const res = await post({ contractAddress: newAddress(), blockchainTokenId: nextBlockchainTokenId(), ...override });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await eventCount(t, org.id)).toBe(before);
    });

    it('accepts limits exactly: 2,048 characters and the largest safe integer', async () => {
      const name = 'n'.repeat(2048);
      const image = `https://example.com/${'a'.repeat(2048 - 20)}`;
      expect(image).toHaveLength(2048);
      const res = await post({
        contractAddress: newAddress(),
        blockchainTokenId: '1',
        metadata: { name, image, editionId: 0, totalEdition: Number.MAX_SAFE_INTEGER },
      }).expect(201);
      expect(res.body.metadata).toEqual(expect.objectContaining({ name, image, editionId: 0, totalEdition: Number.MAX_SAFE_INTEGER }));
      expect((await get(res.body.id).expect(200)).body.metadata.totalEdition).toBe(Number.MAX_SAFE_INTEGER);
    });

    it('400 INVALID_ADDRESS for a mixed-case contract address with a wrong checksum', async () => {
      const good = checksum('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
      const wrong = good.replace('aAeb', 'AAeb');
      const res = await post({ contractAddress: wrong, blockchainTokenId: '1' });
      expectProblem(res, 400, 'INVALID_ADDRESS');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'contractAddress' })]);
    });

    it('409 TOKEN_ALREADY_EXISTS for the same contract (in any case) and blockchainTokenId, writing nothing', async () => {
      const contract = newAddress();
      const first = await post({ contractAddress: contract, blockchainTokenId: '5' }).expect(201);
      const before = await eventCount(t, org.id);
      const again = await post({ contractAddress: checksum(contract), blockchainTokenId: '5', metadata: { name: 'dup' } });
      expectProblem(again, 409, 'TOKEN_ALREADY_EXISTS');
      expect(await eventCount(t, org.id)).toBe(before);
      const rows = await sql(t, 'select id from token where organization_id = ? and contract_address = ?', [org.id, contract]);
      expect(rows).toEqual([{ id: first.body.id }]);
      // Another token id of the same contract, and the same token in another organization, are fine.
      await post({ contractAddress: contract, blockchainTokenId: '6' }).expect(201);
      const other = await createOrganization(t);
      await post({ contractAddress: contract, blockchainTokenId: '5' }, other.adminKey).expect(201);
    });

    it('creates exactly one token when the same one is posted concurrently', async () => {
      const contract = newAddress();
      const results = await Promise.all(Array.from({ length: 8 }, () => post({ contractAddress: contract, blockchainTokenId: '77' })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      const rows = await sql(t, 'select id from token where organization_id = ? and contract_address = ?', [org.id, contract]);
      expect(rows).toHaveLength(1);
    });

    it('404 TOKEN_NOT_FOUND for an unknown token and 400 for a token id that is not a UUID', async () => {
      expectProblem(await get(UNKNOWN_ID), 404, 'TOKEN_NOT_FOUND');
      expectProblem(await get('42'), 400, 'INVALID_PATH_PARAMETER');
    });

    it('404 TOKEN_NOT_FOUND when the whitelist is on and the contract is not on it; the token when it is', async () => {
      const own = await createOrganization(t);
      const api = nftApi(t, own.adminKey);
      const contract = newAddress();
      const token = await api.token({ contractAddress: contract });
      await t.http().get(`/v1/tokens/${token.id}`).set(api.auth).expect(200);

      await sql(t, 'insert into nft_whitelist (organization_id, enabled, updated_at) values (?, true, now())', [own.id]);
      expectProblem(await t.http().get(`/v1/tokens/${token.id}`).set(api.auth), 404, 'TOKEN_NOT_FOUND');

      await sql(t, 'insert into nft_whitelist_contract (organization_id, contract_address, created_at) values (?, ?, now())', [
        own.id,
        contract,
      ]);
      expect((await t.http().get(`/v1/tokens/${token.id}`).set(api.auth).expect(200)).body).toEqual(token);
    });
  });

  describe('PATCH metadata', () => {
    it('changes only the fields sent, clears with null, and answers the whole token', async () => {
      const token = (await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: FULL_METADATA }).expect(201)).body;
      const res = await patch(token.id, { metadata: { name: 'Renamed', image: null, editionId: 2 } }).expect(200);
      expect(res.body).toEqual({
        ...token,
        metadata: { ...FULL_METADATA, name: 'Renamed', image: null, editionId: 2 },
        media: { ...PENDING_MEDIA, status: 'none' },
      });
      expect((await get(token.id).expect(200)).body).toEqual(res.body);
    });

    it('emits nft / Token / update with {field: newValue} of exactly the fields that changed', async () => {
      const token = (
        await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: { name: 'A', description: 'same' } }).expect(201)
      ).body;
      await patch(token.id, {
        metadata: { name: 'B', description: 'same', externalUrl: 'https://example.com', totalEdition: null },
      }).expect(200);
      const events = await eventsFor(t, token.id);
      expect(events.map((e) => [e.webhook_type, e.resource_type, e.action])).toEqual([
        ['nft', 'Token', 'create'],
        ['nft', 'Token', 'update'],
      ]);
      expect(events[1].changes).toEqual({ name: 'B', externalUrl: 'https://example.com' });
      expect(events[1].organization_id).toBe(org.id);

      await patch(token.id, { metadata: { name: null } }).expect(200);
      const after = await eventsFor(t, token.id);
      expect(after).toHaveLength(3);
      expect(after[2].changes).toEqual({ name: null });
    });

    it('a PATCH that changes nothing answers the token and emits no event', async () => {
      const token = (await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: { name: 'Same' } }).expect(201)).body;
      expect((await patch(token.id, { metadata: { name: 'Same', image: null } }).expect(200)).body).toEqual(token);
      expect((await patch(token.id, { metadata: {} }).expect(200)).body).toEqual(token);
      expect(await eventsFor(t, token.id)).toHaveLength(1);
    });

    it('400 for invalid values, unknown fields, a missing metadata object or other fields, changing nothing', async () => {
      const token = (await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: { name: 'Keep' } }).expect(201)).body;
      const cases: [unknown, string][] = [
        [{ metadata: { image: 'javascript:alert(1)' } }, 'metadata.image'],
        [{ metadata: { editionId: -3 } }, 'metadata.editionId'],
        [{ metadata: { unknown: 1 } }, 'metadata.unknown'],
        [{}, 'metadata'],
        [{ metadata: null }, 'metadata'],
        [{ metadata: { name: 'x' }, contractAddress: newAddress() }, 'contractAddress'],
        [{ metadata: { name: 'x' }, blockchainTokenId: '2' }, 'blockchainTokenId'],
      ];
      for (const [body, field] of cases) {
        const res = await patch(token.id, body);
        expectProblem(res, 400, 'VALIDATION_FAILED');
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }
      expect((await get(token.id).expect(200)).body).toEqual(token);
      expect(await eventsFor(t, token.id)).toHaveLength(1);
    });

    it('404 TOKEN_NOT_FOUND for an unknown token; 400 for a bad id', async () => {
      expectProblem(await patch(UNKNOWN_ID, { metadata: { name: 'x' } }), 404, 'TOKEN_NOT_FOUND');
      expectProblem(await patch('nope', { metadata: { name: 'x' } }), 400, 'INVALID_PATH_PARAMETER');
    });

    it('reports each concurrent change exactly once', async () => {
      const token = (await post({ contractAddress: newAddress(), blockchainTokenId: '1' }).expect(201)).body;
      const names = Array.from({ length: 6 }, (_, i) => `name-${i}`);
      await Promise.all(names.map((name) => patch(token.id, { metadata: { name } }).expect(200)));
      const updates = (await eventsFor(t, token.id)).filter((e) => e.action === 'update');
      expect(updates.map((e) => (e.changes as { name: string }).name).sort()).toEqual(names);
      const final = (await get(token.id).expect(200)).body.metadata.name;
      expect(final).toBe((updates[updates.length - 1].changes as { name: string }).name);
    });
  });

  describe('tenant isolation and roles', () => {
    it("another organization's token is 404 to GET and PATCH, exactly like an unknown one, and stays unchanged", async () => {
      const other = await createOrganization(t);
      const theirs = (
        await post({ contractAddress: newAddress(), blockchainTokenId: '1', metadata: { name: 'Theirs' } }, other.adminKey).expect(201)
      ).body;
      const unknown = await get(UNKNOWN_ID);
      const foreign = await get(theirs.id);
      expectProblem(foreign, 404, 'TOKEN_NOT_FOUND');
      expect(foreign.body.title).toBe(unknown.body.title);
      expectProblem(await patch(theirs.id, { metadata: { name: 'Hijacked' } }), 404, 'TOKEN_NOT_FOUND');
      const still = await t.http().get(`/v1/tokens/${theirs.id}`).set(bearer(other.adminKey)).expect(200);
      expect(still.body.metadata.name).toBe('Theirs');
      expect(await eventsFor(t, theirs.id)).toHaveLength(1);
    });

    it('read may GET only; write may POST and PATCH only; admin may do all; no key is a 401', async () => {
      const token = (await post({ contractAddress: newAddress(), blockchainTokenId: '1' }).expect(201)).body;
      expectProblem(await post({ contractAddress: newAddress(), blockchainTokenId: '1' }, reader), 403, 'FORBIDDEN');
      expectProblem(await patch(token.id, { metadata: { name: 'x' } }, reader), 403, 'FORBIDDEN');
      expectProblem(await get(token.id, writer), 403, 'FORBIDDEN');
      await get(token.id, org.adminKey).expect(200);
      await patch(token.id, { metadata: { name: 'x' } }, org.adminKey).expect(200);
      expectProblem(await t.http().get(`/v1/tokens/${token.id}`), 401, 'UNAUTHENTICATED');
      expectProblem(await t.http().patch(`/v1/tokens/${token.id}`).send({ metadata: {} }), 401, 'UNAUTHENTICATED');
    });
  });
});
