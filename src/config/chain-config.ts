import { Fail, int, Parsed, protocolOf, rule, url, variable } from './variables';

/** One followed EVM chain: the id its node must report and the node's JSON-RPC URL. */
export interface ChainRpc {
  readonly chainId: number;
  readonly url: string;
}

/** Following EVM chains (docs/CHAIN.md "Following a chain"); no rpcUrls = no chain followed. */
export interface ChainConfig {
  /** CHAIN_RPC_URLS `1=https://..,31337=http://..`: one entry per chain, ids unique. */
  readonly rpcUrls: readonly ChainRpc[];
  /** A block is applied once this many blocks sit on top of it (0 = at once). */
  readonly confirmations: number;
  /** First block followed on a chain's first start; null = the head at that moment. */
  readonly startBlock: number | null;
  readonly pollIntervalMs: number;
  /** Blocks per eth_getLogs; halved automatically while a node refuses a range. */
  readonly maxBlockRange: number;
  readonly ipfsGatewayUrl: string;
  readonly metadataTimeoutMs: number;
  readonly metadataMaxBytes: number;
}

export const chainVariables = {
  CHAIN_RPC_URLS: variable<ChainRpc[]>([], parseChainRpcUrls),
  CHAIN_CONFIRMATIONS: int(12, 0, 10_000),
  CHAIN_START_BLOCK: rule<number | null>(null, 'a block number (an integer of 0 or more)', (t) =>
    /^\d{1,15}$/.test(t) ? Number(t) : null,
  ),
  CHAIN_POLL_INTERVAL_MS: int(2000, 10, 3_600_000),
  CHAIN_MAX_BLOCK_RANGE: int(1000, 1, 1_000_000),
  IPFS_GATEWAY_URL: url('https://ipfs.io/ipfs/', ['http:', 'https:']),
  METADATA_TIMEOUT_MS: int(5000, 100, 60_000),
  METADATA_MAX_BYTES: int(256 * 1024, 1024, 10 * 1024 * 1024),
};

export function chainConfig(e: Parsed<typeof chainVariables>): ChainConfig {
  return {
    rpcUrls: e.CHAIN_RPC_URLS,
    confirmations: e.CHAIN_CONFIRMATIONS,
    startBlock: e.CHAIN_START_BLOCK,
    pollIntervalMs: e.CHAIN_POLL_INTERVAL_MS,
    maxBlockRange: e.CHAIN_MAX_BLOCK_RANGE,
    ipfsGatewayUrl: e.IPFS_GATEWAY_URL,
    metadataTimeoutMs: e.METADATA_TIMEOUT_MS,
    metadataMaxBytes: e.METADATA_MAX_BYTES,
  };
}

const CHAIN_RPC_PROTOCOLS = ['http:', 'https:', 'ws:', 'wss:'];

/**
 * CHAIN_RPC_URLS: comma-separated `<chainId>=<http(s) or ws(s) URL>`. Each bad entry is named
 * (without its URL's credentials: node URLs often carry an API key in the path or userinfo).
 */
function parseChainRpcUrls(text: string, fail: Fail): ChainRpc[] | null {
  const chains: ChainRpc[] = [];
  let failed = false;
  text
    .split(',')
    .map((e) => e.trim())
    .forEach((entry, index) => {
      const eq = entry.indexOf('=');
      const idText = eq > 0 ? entry.slice(0, eq).trim() : '';
      const urlText = eq > 0 ? entry.slice(eq + 1).trim() : '';
      const chainId = Number(idText);
      if (eq <= 0 || !/^\d{1,15}$/.test(idText) || chainId < 1) {
        // The entry itself is not echoed: without its "=" it may be a URL holding an API key.
        const got = idText !== '' && !idText.includes('/') ? ` (got "${idText}" as chain id)` : '';
        failed = !fail(
          `entry ${index + 1} must be <chainId>=<url> with a positive integer chain id, e.g. 1=https://node.example/rpc${got}`,
        );
      } else if (!CHAIN_RPC_PROTOCOLS.includes(protocolOf(urlText))) {
        failed = !fail(`entry ${index + 1} (chain ${chainId}) must have an http, https, ws or wss JSON-RPC URL after "="`);
      } else if (chains.some((c) => c.chainId === chainId)) {
        failed = !fail(`names chain ${chainId} twice`);
      } else {
        chains.push({ chainId, url: urlText });
      }
    });
  return failed ? null : chains;
}
