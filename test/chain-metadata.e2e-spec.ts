import sharp from 'sharp';
import { Address } from 'viem';
import { ERC1155_ABI, ERC721_ABI, LocalChain, erc1155HexId } from './support/evm';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { chainToken, MetadataServer, settled, tokenOf } from './support/metadata-server';
import { eventsFor, newAddress, UNKNOWN_ID } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks } from './support/webhooks';

/** A chain id of this suite's own: suites share a database, and a contract's metadata breaker is kept per chain and address. */
const CHAIN_ID = 31801;

const SECRET = 'chain-metadata-shared-secret-0123456789';
const MAX_BYTES = 4096;
/** The dev account that receives the minted tokens. */
const HOLDER = 1;
const WHITELIST = '/api/organization/v1/current-organization/nft-whitelist';
/** Content ids (CIDv1) the gateway is asked for. */
const CID_META = 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi';
const CID_PRIVATE = 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku';
const CID_REDIRECT = 'bafybeibwzifw52ttrkqlikfzext5akxu7lz4xiwjgwzmqcpdzmp3n5vnbe';

describe('chain token metadata', () => {
  let chain: LocalChain;
  let meta: MetadataServer;

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: CHAIN_ID });
    meta = await new MetadataServer().start();
  });
  afterAll(async () => {
    await meta?.stop();
    await chain?.stop();
  });

  describe('with private networks allowed (a development deployment)', () => {
    let t: TestApp;
    let receiver: TestReceiver;
    let org: TestOrganization;
    let nft: Address;
    let multi: Address;
    let nextId = 1n;

    const mint721 = async (uri: string | null): Promise<bigint> => {
      const id = nextId++;
      await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[HOLDER], id]);
      if (uri !== null) await chain.write(nft, ERC721_ABI, 'setTokenURI', [id, uri]);
      return id;
    };

    beforeAll(async () => {
      receiver = await new TestReceiver().start();
      t = await createTestApp({
        CHAIN_RPC_URLS: `${CHAIN_ID}=${chain.rpcUrl}`,
        CHAIN_POLL_INTERVAL_MS: '100',
        IPFS_GATEWAY_URL: `${meta.origin}/gateway/ipfs/`,
        METADATA_MAX_BYTES: String(MAX_BYTES),
        // The follower records at once: the first test watches a token go from mint to metadata.
        CHAIN_CONFIRMATIONS: '0',
      });
      org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, webhookTypes: ['nft'] });
      nft = await chain.deployErc721({ name: 'Cats', symbol: 'CAT' });
      multi = await chain.deployErc1155(`${meta.origin}/multi/{id}.json`);
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.stop();
    });

    it('a token minted on chain to a watched wallet is created pending, then its metadata fills in', async () => {
      const address = newAddress();
      const wallet = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name: 'watched', address }).expect(201);
      const id = nextId++;
      // The URI first, so that whenever the worker reads it, it is there.
      await chain.write(nft, ERC721_ABI, 'setTokenURI', [id, `data:application/json,${encodeURIComponent('{"name":"Minted on chain"}')}`]);
      await chain.write(nft, ERC721_ABI, 'mint', [address, id]);

      const balances = await waitUntil(
        () => t.http().get(`/v2/wallets/${wallet.body.id}/nft-balances`).set(bearer(org.adminKey)),
        (res) => res.status === 200 && res.body.nftTokenBalances.length === 1,
      );
      const tokenId: string = balances.body.nftTokenBalances[0].tokenId;
      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ chainId: CHAIN_ID, metadataStatus: 'ok', metadataError: null, blockchainTokenId: String(id) });
      expect(token.metadata.name).toBe('Minted on chain');
      const webhooks = await receiver.waitFor((r) => r.filter((w) => w.body.resourceId === tokenId).length === 2);
      expect(webhooks.filter((w) => w.body.resourceId === tokenId).map((w) => [w.body.action, w.body.changes])).toEqual([
        ['create', null],
        ['update', { name: 'Minted on chain' }],
      ]);
    });

    it('fills the six fields from a base64 data: URI, leaves the others null, and sends nft update with the changes', async () => {
      const document = {
        name: 'Cat #1',
        description: 'A cat, on chain',
        image: 'ipfs://bafycat/1.png',
        animation_url: 'https://anim.example/1.mp4',
        external_url: 'https://cats.example/1',
        background_color: 'ffaa00',
        attributes: [{ trait_type: 'eyes', value: 'green' }],
      };
      const id = await mint721(`data:application/json;base64,${Buffer.from(JSON.stringify(document)).toString('base64')}`);
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');

      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ chainId: CHAIN_ID, metadataStatus: 'ok', metadataError: null, blockchainTokenId: String(id) });
      const changes = {
        name: 'Cat #1',
        description: 'A cat, on chain',
        image: 'ipfs://bafycat/1.png',
        animationUrl: 'https://anim.example/1.mp4',
        externalUrl: 'https://cats.example/1',
        backgroundColor: 'ffaa00',
      };
      expect(token.metadata).toEqual({
        ...changes,
        editionId: null,
        totalEdition: null,
        creatorName: null,
        creatorImageUrl: null,
        creatorExternalPageUrl: null,
      });

      const webhooks = await receiver.waitFor((r) => r.filter((w) => w.body.resourceId === tokenId).length === 2);
      const mine = webhooks.filter((w) => w.body.resourceId === tokenId);
      expect(mine.map((w) => [w.body.resourceType, w.body.action])).toEqual([
        ['Token', 'create'],
        ['Token', 'update'],
      ]);
      expect(mine[1].body.changes).toEqual(changes);
    });

    it('reads a percent-encoded data: URI', async () => {
      const id = await mint721(`data:application/json;charset=utf-8,${encodeURIComponent('{"name":"Percent, encoded ✓"}')}`);
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');
      const token = await settled(t, org, tokenId);
      expect(token.metadataStatus).toBe('ok');
      expect(token.metadata.name).toBe('Percent, encoded ✓');
      expect(token.metadata.image).toBeNull();
    });

    it('fetches an ERC-1155 uri from an HTTP server with {id} as 64 lowercase hex digits', async () => {
      await chain.write(multi, ERC1155_ABI, 'mint', [chain.accounts[HOLDER], 255n, 3n]);
      meta.json(`/multi/${erc1155HexId(255n)}.json`, { name: 'Sword', image: 'https://img.example/sword.png' });
      const tokenId = await chainToken(t, org, CHAIN_ID, multi, 255n, 'erc1155');

      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ metadataStatus: 'ok', metadataError: null });
      expect(token.metadata).toMatchObject({ name: 'Sword', image: 'https://img.example/sword.png', description: null });
      expect(meta.requests).toContain('/multi/00000000000000000000000000000000000000000000000000000000000000ff.json');
    });

    it('fetches ipfs:// through IPFS_GATEWAY_URL', async () => {
      const id = await mint721(`ipfs://${CID_META}/cat.json`);
      meta.json(`/gateway/ipfs/${CID_META}/cat.json`, { name: 'From IPFS' });
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');
      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ metadataStatus: 'ok', metadata: expect.objectContaining({ name: 'From IPFS' }) });
    });

    it('fetches the image a chain token’s metadata names, as for a token written through the API', async () => {
      const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#00ff00' } })
        .png()
        .toBuffer();
      meta.routes.set('/images/chain.png', (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
      const id = await mint721(`${meta.origin}/with-image.json`);
      meta.json('/with-image.json', { name: 'Pictured', image: `${meta.origin}/images/chain.png` });
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');
      const token = await waitUntil(
        () => tokenOf(t, org, tokenId),
        (got) => got.media.status !== 'pending' && got.media.status !== 'none',
        30_000,
      );
      expect(token.media).toMatchObject({ status: 'ok', error: null, width: 40, height: 20, contentType: 'image/png' });
      expect(token.media.thumbnails.small).toContain(`/v1/media/${token.media.sha256}/64.webp?exp=`);
      const mediaHooks = await waitUntil(
        () =>
          receiver.received.filter((w) => {
            const body = w.body as { resourceId?: string; changes?: Record<string, unknown> | null };
            return body.resourceId === tokenId && body.changes != null && 'media' in body.changes;
          }),
        (hooks) => hooks.length >= 1,
      );
      expect(mediaHooks.map((w) => w.body.changes)).toEqual([
        { media: { status: 'ok', error: null, width: 40, height: 20, contentType: 'image/png', sha256: token.media.sha256 } },
      ]);
    });

    it('refuses a document over the size cap, for good, and says so on the token', async () => {
      const id = await mint721(`${meta.origin}/big.json`);
      // Chunked, without content-length: the cap holds on the bytes read, not on a header.
      meta.routes.set('/big.json', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`{"name":"big","description":"`);
        for (let i = 0; i < 10; i++) res.write('x'.repeat(1000));
        res.end('"}');
      });
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');
      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ metadataStatus: 'failed', metadataError: `the metadata is larger than ${MAX_BYTES} bytes` });
      expect(token.metadata.name).toBeNull();
      expect(meta.requests.filter((p) => p === '/big.json')).toHaveLength(1);
    });

    it('shows why a fetch failed and retries with backoff until it succeeds', async () => {
      const id = await mint721(`${meta.origin}/flaky.json`);
      meta.routes.set('/flaky.json', (_req, res, n) => {
        if (n === 1) return void res.writeHead(503).end('busy');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"Second time lucky"}');
      });
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');

      const failing = await waitUntil(
        () => tokenOf(t, org, tokenId),
        (token) => token.metadataError !== null,
      );
      expect(failing).toMatchObject({ metadataStatus: 'pending', metadataError: 'the metadata server answered 503' });
      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({
        metadataStatus: 'ok',
        metadataError: null,
        metadata: expect.objectContaining({ name: 'Second time lucky' }),
      });
      // The 503 and the success at least; a request lost on the way (a connection reset on a loaded
      // machine) is retried too. Once the metadata is stored, nothing fetches it again.
      const fetched = meta.requests.filter((p) => p === '/flaky.json').length;
      expect(fetched).toBeGreaterThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(meta.requests.filter((p) => p === '/flaky.json')).toHaveLength(fetched);
    });

    it('fails for good on a reverted tokenURI (a token that does not exist on chain)', async () => {
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, 999_999n, 'erc721');
      const token = await settled(t, org, tokenId);
      expect(token.metadataStatus).toBe('failed');
      expect(token.metadataError).toMatch(/^tokenURI\(999999\) reverted/);
    });

    it('refresh fetches again: 202, then the new values with an nft update of only what changed', async () => {
      const id = await mint721(`${meta.origin}/refresh.json`);
      meta.json('/refresh.json', { name: 'Before', description: 'Same' });
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');
      expect(await settled(t, org, tokenId)).toMatchObject({ metadata: expect.objectContaining({ name: 'Before' }) });

      meta.json('/refresh.json', { name: 'After', description: 'Same' });
      const res = await t.http().post(`/v1/tokens/${tokenId}/metadata/refresh`).set(bearer(org.adminKey)).expect(202);
      expect(res.body).toEqual({ tokenId, metadataStatus: 'pending', mediaStatus: 'none' });
      await waitUntil(
        () => tokenOf(t, org, tokenId),
        (token) => token.metadata.name === 'After' && token.metadataStatus === 'ok',
      );
      const webhooks = await receiver.waitFor(
        (r) => r.filter((w) => w.body.resourceId === tokenId && w.body.action === 'update').length === 2,
      );
      const updates = webhooks.filter((w) => w.body.resourceId === tokenId && w.body.action === 'update');
      expect(updates.map((w) => w.body.changes)).toEqual([{ name: 'Before', description: 'Same' }, { name: 'After' }]);

      // A refresh that finds the same document changes nothing and emits nothing.
      const fetchesBefore = meta.requests.filter((p) => p === '/refresh.json').length;
      await t.http().post(`/v1/tokens/${tokenId}/metadata/refresh`).set(bearer(org.adminKey)).expect(202);
      await waitUntil(
        () => meta.requests.filter((p) => p === '/refresh.json').length,
        (n) => n > fetchesBefore,
      );
      await settled(t, org, tokenId);
      const events = await eventsFor(t, tokenId);
      expect(events.map((e) => e.action)).toEqual(['create', 'update', 'update']);
    });

    it('refresh: unknown or hidden tokens are 404, API tokens refresh only their media, read keys 403', async () => {
      const auth = bearer(org.adminKey);
      expectProblem(await t.http().post(`/v1/tokens/${UNKNOWN_ID}/metadata/refresh`).set(auth), 404, 'TOKEN_NOT_FOUND');

      const apiToken = await t
        .http()
        .post('/v1/tokens')
        .set(auth)
        .send({ contractAddress: nft, blockchainTokenId: '424242', metadata: { name: 'API' } })
        .expect(201);
      const accepted = await t.http().post(`/v1/tokens/${apiToken.body.id}/metadata/refresh`).set(auth).expect(202);
      expect(accepted.body).toEqual({ tokenId: apiToken.body.id, metadataStatus: 'ok', mediaStatus: 'none' });
      expect((await tokenOf(t, org, apiToken.body.id)).metadataStatus).toBe('ok');

      const readKey = await createApiKey(t, org.id, ['read']);
      expect((await t.http().post(`/v1/tokens/${apiToken.body.id}/metadata/refresh`).set(bearer(readKey.key))).status).toBe(403);

      // Another organization's token, and a token hidden by its own organization's whitelist.
      const other = await createOrganization(t);
      const id = await mint721('data:application/json,{"name":"hidden"}');
      const hidden = await chainToken(t, other, CHAIN_ID, nft, id, 'erc721');
      expectProblem(await t.http().post(`/v1/tokens/${hidden}/metadata/refresh`).set(auth), 404, 'TOKEN_NOT_FOUND');
      await t.http().patch(WHITELIST).set(bearer(other.adminKey)).send({ enabled: true }).expect(200);
      expectProblem(await t.http().post(`/v1/tokens/${hidden}/metadata/refresh`).set(bearer(other.adminKey)), 404, 'TOKEN_NOT_FOUND');
    });
  });

  describe('with private networks refused (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false)', () => {
    let t: TestApp;
    let org: TestOrganization;
    let nft: Address;

    beforeAll(async () => {
      t = await createTestApp({
        CHAIN_RPC_URLS: `${CHAIN_ID}=${chain.rpcUrl}`,
        CHAIN_POLL_INTERVAL_MS: '100',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
        IPFS_GATEWAY_URL: `${meta.origin}/gateway/ipfs/`,
      });
      org = await createOrganization(t);
      nft = await chain.deployErc721({ name: 'Sneaky', symbol: 'SNK' });
    });
    afterAll(async () => {
      await t?.close();
    });

    it.each([
      ['a loopback IP', () => `${meta.origin}/secret.json`],
      ['a name that resolves to loopback', () => `${meta.origin.replace('127.0.0.1', 'localhost')}/secret.json`],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ])('refuses a token URI pointing at %s, for good, without connecting', async (_label, uri) => {
      meta.json('/secret.json', { name: 'internal' });
      const before = meta.requests.length;
      const id = BigInt(Math.floor(Math.random() * 1e9));
      await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], id]);
      await chain.write(nft, ERC721_ABI, 'setTokenURI', [id, uri()]);
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, id, 'erc721');

      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({
        metadataStatus: 'failed',
        metadataError:
          'the metadata URL must point to a host this deployment may send to: it did not resolve, or it resolved to a private, loopback, link-local or otherwise non-public address',
      });
      expect(token.metadata.name).toBeNull();
      expect(meta.requests.length).toBe(before);
    });

    it('still uses the configured IPFS gateway, which is the operator’s own choice', async () => {
      meta.json(`/gateway/ipfs/${CID_PRIVATE}/1.json`, { name: 'Via the private gateway' });
      await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], 1n]);
      await chain.write(nft, ERC721_ABI, 'setTokenURI', [1n, `ipfs://${CID_PRIVATE}/1.json`]);
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, 1n, 'erc721');
      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ metadataStatus: 'ok', metadata: expect.objectContaining({ name: 'Via the private gateway' }) });
    });

    it('checks a redirect away from the gateway like any token URI', async () => {
      meta.routes.set(`/gateway/ipfs/${CID_REDIRECT}/2.json`, (_req, res) =>
        res.writeHead(302, { location: `${meta.origin.replace('127.0.0.1', 'localhost')}/secret.json` }).end(),
      );
      meta.json('/secret.json', { name: 'internal' });
      await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], 2n]);
      await chain.write(nft, ERC721_ABI, 'setTokenURI', [2n, `ipfs://${CID_REDIRECT}/2.json`]);
      const before = meta.requests.filter((p) => p === '/secret.json').length;
      const tokenId = await chainToken(t, org, CHAIN_ID, nft, 2n, 'erc721');
      const token = await settled(t, org, tokenId);
      expect(token.metadataStatus).toBe('failed');
      expect(token.metadataError).toMatch(/must point to a host this deployment may send to/);
      expect(meta.requests.filter((p) => p === '/secret.json').length).toBe(before);
    });
  });
});
