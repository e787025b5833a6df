import { loadConfig as load } from './app-config';
import { ConfigError } from './variables';

const loadConfig = (env: Record<string, string | undefined>) => load({ NODE_ENV: 'development', ...env });

describe('chain configuration', () => {
  it('follows no chain by default, with the chain defaults', () => {
    expect(loadConfig({}).chain).toEqual({
      rpcUrls: [],
      confirmations: 12,
      startBlock: null,
      pollIntervalMs: 2000,
      maxBlockRange: 1000,
      ipfsGatewayUrl: 'https://ipfs.io/ipfs/',
      metadataTimeoutMs: 5000,
      metadataMaxBytes: 262144,
    });
  });

  it('reads CHAIN_RPC_URLS and the chain settings, and ROLE=indexer', () => {
    const config = loadConfig({
      ROLE: 'indexer',
      CHAIN_RPC_URLS: '1=https://eth.example/v2/key, 31337=http://127.0.0.1:8545,137=wss://poly.example/ws',
      CHAIN_CONFIRMATIONS: '0',
      CHAIN_START_BLOCK: '19000000',
      CHAIN_POLL_INTERVAL_MS: '250',
      CHAIN_MAX_BLOCK_RANGE: '50',
      IPFS_GATEWAY_URL: 'http://127.0.0.1:8080/ipfs/',
    });
    expect(config.role).toBe('indexer');
    expect(config.chain.rpcUrls).toEqual([
      { chainId: 1, url: 'https://eth.example/v2/key' },
      { chainId: 31337, url: 'http://127.0.0.1:8545' },
      { chainId: 137, url: 'wss://poly.example/ws' },
    ]);
    expect(config.chain).toMatchObject({
      confirmations: 0,
      startBlock: 19_000_000,
      pollIntervalMs: 250,
      maxBlockRange: 50,
      ipfsGatewayUrl: 'http://127.0.0.1:8080/ipfs/',
    });
  });

  it.each([
    ['1=ftp://provider.test', /CHAIN_RPC_URLS entry 1 \(chain 1\) must have an http, https, ws or wss JSON-RPC URL/],
    ['1=https://a.test,mainnet=https://b.test', /CHAIN_RPC_URLS entry 2 must be <chainId>=<url> .*\(got "mainnet" as chain id\)/],
    ['https://user:secret@provider.test', /CHAIN_RPC_URLS entry 1 must be <chainId>=<url>/],
    ['0=http://provider.test', /CHAIN_RPC_URLS entry 1 must be <chainId>=<url>/],
    ['5=not a url', /CHAIN_RPC_URLS entry 1 \(chain 5\)/],
    ['1=http://a.test,1=http://b.test', /CHAIN_RPC_URLS names chain 1 twice/],
  ])('stops at a malformed CHAIN_RPC_URLS %s, naming the entry and never echoing a URL', (value, message) => {
    let error: unknown = null;
    try {
      loadConfig({ CHAIN_RPC_URLS: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('secret');
    expect((error as Error).message).not.toContain('.test');
  });

  it.each([
    ['CHAIN_CONFIRMATIONS', '-1'],
    ['CHAIN_CONFIRMATIONS', 'twelve'],
    ['CHAIN_START_BLOCK', '-5'],
    ['CHAIN_START_BLOCK', 'latest'],
    ['CHAIN_POLL_INTERVAL_MS', '0'],
    ['CHAIN_MAX_BLOCK_RANGE', '0'],
    ['IPFS_GATEWAY_URL', 'ipfs://gateway'],
  ])('stops at a bad %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});
