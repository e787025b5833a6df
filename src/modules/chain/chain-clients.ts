import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createPublicClient, http, PublicClient, Transport } from 'viem';
import { AppConfig } from '../../config/app-config';
import type { ChainRpc } from '../../config/chain-config';
import { tokenUriAnswerMaxBytes } from './metadata/token-metadata-document.rules';
import { SubscribeNewHeads, webSocketNode, WebSocketNode } from './ws-transport';

/** How long one JSON-RPC call may take before the follower counts it as a node error. */
const RPC_TIMEOUT_MS = 10_000;
/** How long start-up waits for each node to say its chain id; a node that does not answer does not stop start-up. */
const STARTUP_CHAIN_ID_WAIT_MS = 5_000;

/**
 * Where a node is, safe to print: scheme and host only, since node URLs commonly carry an API key
 * in their path, query or userinfo.
 */
export function describeRpcUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '(unparseable URL)';
  }
}

function transportFor(rpc: ChainRpc, timeout: number): Transport {
  // Retries are the follower's business (with backoff and lastError), not the transport's.
  return rpc.url.startsWith('ws')
    ? webSocketNode(rpc.url, timeout, describeRpcUrl(rpc.url))
    : http(rpc.url, { timeout, retryCount: 0, batch: { batchSize: 200, wait: 0 } });
}

export function createChainClient(rpc: ChainRpc, timeout = RPC_TIMEOUT_MS): PublicClient {
  return createPublicClient({ transport: transportFor(rpc, timeout) });
}

/**
 * The client token metadata reads (`tokenURI`, `uri`) go through: over http(s), one call per
 * request (never batched with another token's call, which may be another organization's) and an
 * answer read up to `maxResponseBytes`, so that a contract answering megabytes fails its own
 * token alone. Over ws(s) every call is a message of its own already; the chain's client serves.
 */
function createMetadataClient(rpc: ChainRpc, shared: PublicClient, maxResponseBytes: number): PublicClient {
  if (rpc.url.startsWith('ws')) return shared;
  return createPublicClient({
    transport: http(rpc.url, { timeout: RPC_TIMEOUT_MS, retryCount: 0, batch: false, maxResponseBodySize: maxResponseBytes }),
  });
}

/** A wrong chain id at a configured URL: the process must not start (it would record another chain's data). */
export class ChainIdMismatchError extends Error {}

export function chainIdMismatchMessage(rpc: ChainRpc, nodeChainId: number): string {
  return (
    `CHAIN_RPC_URLS: chain ${rpc.chainId} is configured at ${describeRpcUrl(rpc.url)}, but that node reports chain id ` +
    `${nodeChainId}; correct the chain id or the URL in CHAIN_RPC_URLS`
  );
}

/**
 * Asks every configured node for its chain id before the service starts. A mismatch throws
 * ChainIdMismatchError (one line naming CHAIN_RPC_URLS, the configured id and the node's id); a
 * node that cannot be reached is only reported back, since the follower retries it with backoff
 * and an outage of the node must not keep the API down.
 */
export async function checkChainIds(config: Pick<AppConfig, 'chain'>): Promise<string[]> {
  const warnings: string[] = [];
  await Promise.all(
    config.chain.rpcUrls.map(async (rpc) => {
      const client = createChainClient(rpc, STARTUP_CHAIN_ID_WAIT_MS);
      let nodeChainId: number;
      try {
        nodeChainId = await client.getChainId();
      } catch (error) {
        warnings.push(
          `chain ${rpc.chainId}: the node at ${describeRpcUrl(rpc.url)} did not say its chain id (${shortReason(error)}); ` +
            'its follower keeps retrying',
        );
        return;
      } finally {
        closeClient(client);
      }
      if (nodeChainId !== rpc.chainId) throw new ChainIdMismatchError(chainIdMismatchMessage(rpc, nodeChainId));
    }),
  );
  return warnings;
}

/** The first line of an error's message, without the request body viem appends. */
export function shortReason(error: unknown): string {
  const e = error as { shortMessage?: string; message?: string };
  const text = e?.shortMessage ?? e?.message ?? String(error);
  return text.split('\n')[0].slice(0, 300);
}

/** The client's WebSocket node, when it has one (a ws(s) URL). */
function webSocketOf(client: PublicClient): WebSocketNode | null {
  const transport = client.transport as Partial<WebSocketNode>;
  return typeof transport.subscribeNewHeads === 'function' && typeof transport.close === 'function' ? (transport as WebSocketNode) : null;
}

function closeClient(client: PublicClient): void {
  webSocketOf(client)?.close();
}

/** One viem public client per configured chain, and one for its token metadata reads. */
@Injectable()
export class ChainClients implements OnApplicationShutdown {
  private readonly clients = new Map<number, PublicClient>();
  private readonly metadataClients = new Map<number, PublicClient>();

  constructor(config: AppConfig) {
    const maxAnswer = tokenUriAnswerMaxBytes(config.chain.metadataMaxBytes);
    for (const rpc of config.chain.rpcUrls) {
      const client = createChainClient(rpc);
      this.clients.set(rpc.chainId, client);
      this.metadataClients.set(rpc.chainId, createMetadataClient(rpc, client, maxAnswer));
    }
  }

  /** The client for `tokenURI`/`uri` calls: unbatched, its answers bounded (see createMetadataClient). */
  metadata(chainId: number): PublicClient {
    const client = this.metadataClients.get(chainId);
    if (!client) throw new Error(`chain ${chainId} is not configured in CHAIN_RPC_URLS`);
    return client;
  }

  chainIds(): number[] {
    return [...this.clients.keys()];
  }

  has(chainId: number): boolean {
    return this.clients.has(chainId);
  }

  get(chainId: number): PublicClient {
    const client = this.clients.get(chainId);
    if (!client) throw new Error(`chain ${chainId} is not configured in CHAIN_RPC_URLS`);
    return client;
  }

  /** The chain's `newHeads` subscription when its node is reached over ws(s); null over http(s), where only polling sees new blocks. */
  newHeads(chainId: number): SubscribeNewHeads | null {
    return webSocketOf(this.get(chainId))?.subscribeNewHeads ?? null;
  }

  onApplicationShutdown(): void {
    for (const client of this.clients.values()) closeClient(client);
  }
}
