import { Address } from 'viem';
import { followEnv, walletAt } from './support/chain-fixture';
import hugeUriArtifact from './support/contracts/TestHugeUriERC721.json';
import { ContractArtifact, ERC721_ABI, LocalChain } from './support/evm';
import { createOrganization, TestOrganization } from './support/factories';
import { chainToken, MetadataServer, settled, tokenOf } from './support/metadata-server';
import { newAddress, nftApi } from './support/nft';
import { waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';

const HUGE_URI: ContractArtifact = hugeUriArtifact as ContractArtifact;

/** Content ids of each accepted form: a CIDv0, a CIDv1 in base32 and one in base36. */
const CID_V0 = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';
const CID_V1 = 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi';
const CID_V1_BASE36 = 'k2jmtxrxbr58aa3716vvr99qallufjtjwmjpxq4dfpiekuv7wdxhqbtn';

describe('token metadata: what a token URI and its document cannot make the service do', () => {
  let chain: LocalChain;
  let gateway: MetadataServer;
  let t: TestApp;
  let org: TestOrganization;
  let nft: Address;
  let nextId = 1n;

  /** A token of `nft` whose tokenURI answers `uri`, created as the follower would. */
  const tokenWithUri = async (uri: string): Promise<string> => {
    const id = nextId++;
    await chain.write(nft, ERC721_ABI, 'mint', [chain.accounts[1], id]);
    await chain.write(nft, ERC721_ABI, 'setTokenURI', [id, uri]);
    return chainToken(t, org, chain.chainId, nft, id, 'erc721');
  };

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31803 });
    gateway = await new MetadataServer().start();
    t = await createTestApp({
      CHAIN_RPC_URLS: `${chain.chainId}=${chain.rpcUrl}`,
      CHAIN_POLL_INTERVAL_MS: '100',
      IPFS_GATEWAY_URL: `${gateway.origin}/gateway/ipfs/`,
    });
    org = await createOrganization(t);
    nft = await chain.deployErc721({ name: 'Paths', symbol: 'PATH' });
    // What a path that walks out of the gateway's /gateway/ipfs/ would reach on its host.
    for (const path of ['/gateway/internal/secret.json', '/internal/secret.json', '/internal/pct?q=1', '/internal/pct', '/secret.json']) {
      gateway.json(path, { name: 'internal' });
    }
  });
  afterAll(async () => {
    await t?.close();
    await gateway?.stop();
    await chain?.stop();
  });

  describe('ipfs:// stays under the gateway path', () => {
    it.each([
      ['a dot-dot CID', 'ipfs://../internal/secret.json'],
      ['a made-up CID and encoded dot-dots with a query', 'ipfs://x/%2e%2e/%2e%2e/internal/pct?q=1'],
      ['dot-dot segments after a CID', `ipfs://${CID_V1}/../../internal/secret.json`],
      ['mixed-case encoded dot-dots', `ipfs://${CID_V1}/%2E./.%2E/internal/secret.json`],
      ['upper-case encoded dot-dots', `ipfs://${CID_V0}/%2E%2E/%2E%2E/internal/secret.json`],
      ['an encoded slash after dot-dot', `ipfs://${CID_V1}/..%2f..%2finternal/secret.json`],
      ['an encoded backslash', `ipfs://${CID_V1}/a%5c..%5c..%5cinternal`],
      ['backslashes', `ipfs://${CID_V1}\\..\\..\\internal\\secret.json`],
      ['a single dot segment', `ipfs://${CID_V1}/./secret.json`],
      ['a query', `ipfs://${CID_V1}/1.json?x=1`],
      ['a fragment', `ipfs://${CID_V1}/1.json#x`],
      ['the older ipfs://ipfs/ form walking out', 'ipfs://ipfs/../../internal/secret.json'],
      ['a CID that is no CID', 'ipfs://gateway/../secret.json'],
    ])('refuses %s for good, without asking the gateway', async (_label, uri) => {
      const before = gateway.requests.length;
      const tokenId = await tokenWithUri(uri);
      const token = await settled(t, org, tokenId);
      expect(token).toMatchObject({ metadataStatus: 'failed', metadataError: expect.stringMatching(/^the ipfs URI is not accepted/) });
      expect(token.metadata.name).toBeNull();
      expect(gateway.requests.slice(before)).toEqual([]);
    });

    it('does not follow a redirect of the gateway out of its path on its own host', async () => {
      const path = `/gateway/ipfs/${CID_V0}/moved.json`;
      gateway.routes.set(path, (_req, res) => res.writeHead(302, { location: '/internal/secret.json' }).end());
      const before = gateway.requests.length;
      const token = await settled(t, org, await tokenWithUri(`ipfs://${CID_V0}/moved.json`));
      expect(token).toMatchObject({ metadataStatus: 'failed', metadataError: 'the IPFS gateway redirected out of its path' });
      expect(gateway.requests.slice(before)).toEqual([path]);
    });

    it('fetches a CIDv0, a CIDv1 (base32 and base36) and the older ipfs://ipfs/ form under the gateway path', async () => {
      const documents: [string, string][] = [
        [`ipfs://${CID_V0}/meta/1.json`, `/gateway/ipfs/${CID_V0}/meta/1.json`],
        [`ipfs://${CID_V1}`, `/gateway/ipfs/${CID_V1}`],
        [`ipfs://ipfs/${CID_V1}/2.json`, `/gateway/ipfs/${CID_V1}/2.json`],
        [`ipfs://${CID_V1_BASE36}/a%20b.json`, `/gateway/ipfs/${CID_V1_BASE36}/a%20b.json`],
      ];
      for (const [uri, path] of documents) {
        gateway.json(path, { name: `at ${path}` });
        const before = gateway.requests.length;
        const token = await settled(t, org, await tokenWithUri(uri));
        expect(token).toMatchObject({ metadataStatus: 'ok', metadata: expect.objectContaining({ name: `at ${path}` }) });
        expect(gateway.requests.slice(before)).toEqual([path]);
      }
    });
  });

  describe('data: links in a document', () => {
    it('keeps a data: image, stores null for any other data: link, and maps the rest', async () => {
      const svg = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')}`;
      const document = {
        name: 'Links',
        description: 'data: links of every kind',
        image: svg,
        animation_url: `data:text/html,${encodeURIComponent('<script>alert(document.cookie)</script>')}`,
        external_url: 'data:application/javascript;base64,YWxlcnQoMSk=',
        background_color: '000000',
      };
      const token = await settled(t, org, await tokenWithUri(`data:application/json,${encodeURIComponent(JSON.stringify(document))}`));
      expect(token).toMatchObject({ metadataStatus: 'ok', metadataError: null });
      expect(token.metadata).toMatchObject({
        name: 'Links',
        description: 'data: links of every kind',
        image: svg,
        animationUrl: null,
        externalUrl: null,
        backgroundColor: '000000',
      });
    });

    it('stores null for a data: image link of another type (text/html, or none given)', async () => {
      const document = { name: 'Not an image', image: 'data:text/html;base64,PHNjcmlwdD4=', animation_url: 'data:,hello' };
      const token = await settled(t, org, await tokenWithUri(`data:application/json,${encodeURIComponent(JSON.stringify(document))}`));
      expect(token).toMatchObject({ metadataStatus: 'ok' });
      expect(token.metadata).toMatchObject({ name: 'Not an image', image: null, animationUrl: null });
    });
  });
});

describe('token metadata: an oversized tokenURI answer fails only its own token', () => {
  let chain: LocalChain;
  let t: TestApp;
  let first: TestOrganization;
  let second: TestOrganization;

  beforeAll(async () => {
    // An answer of 11 MiB costs about 260 million gas of memory; anvil's default would refuse the call.
    chain = await LocalChain.start({ chainId: 31804, gasLimit: 2_000_000_000 });
    t = await createTestApp(followEnv(chain));
    first = await createOrganization(t);
    second = await createOrganization(t);
  });
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  it('a token whose tokenURI answers more than 10 MiB fails; the other tokens minted in the same block are ok', async () => {
    const firstAddress = newAddress();
    const secondAddress = newAddress();
    const firstWallet = await walletAt(t, first, firstAddress, 'huge');
    const secondWallet = await walletAt(t, second, secondAddress, 'normal');
    const contract = await chain.deploy(HUGE_URI);
    await chain.write(contract, HUGE_URI.abi, 'setHugeURI', [1n, BigInt(11 * 1024 * 1024)]);
    await chain.write(contract, HUGE_URI.abi, 'setTokenURI', [2n, `data:application/json,${encodeURIComponent('{"name":"normal"}')}`]);
    await chain.write(contract, HUGE_URI.abi, 'setTokenURI', [3n, `data:application/json,${encodeURIComponent('{"name":"also normal"}')}`]);
    // One transaction, one block: ids 1, 2 and 3.
    await chain.write(contract, HUGE_URI.abi, 'mintMany', [[firstAddress, secondAddress, firstAddress], 1n]);
    const mintedAt = Date.now();

    const [normal] = await waitUntil(
      () => nftApi(t, second.adminKey).allBalances(secondWallet),
      (b) => b.length === 1,
      20_000,
    );
    const ok = await waitUntil(
      () => tokenOf(t, second, normal.tokenId),
      (token) => token.metadataStatus === 'ok',
      Math.max(1, mintedAt + 20_000 - Date.now()),
    );
    expect(ok.metadata.name).toBe('normal');

    const held = await waitUntil(
      () => nftApi(t, first.adminKey).allBalances(firstWallet),
      (b) => b.length === 2,
    );
    const tokens = await Promise.all(held.map((b) => tokenOf(t, first, b.tokenId)));
    const byChainId = (id: string): string => tokens.find((token) => token.blockchainTokenId === id).id;
    const alsoNormal = await waitUntil(
      () => tokenOf(t, first, byChainId('3')),
      (token) => token.metadataStatus === 'ok',
      Math.max(1, mintedAt + 20_000 - Date.now()),
    );
    expect(alsoNormal.metadata.name).toBe('also normal');
    const huge = await settled(t, first, byChainId('1'));
    expect(huge.metadataStatus).toBe('failed');
    expect(huge.metadataError).toMatch(/^tokenURI\(1\) answered more than \d+ bytes/);
  });
});
