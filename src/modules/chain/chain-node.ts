import { BaseError, HttpRequestError, PublicClient, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from 'viem';
import { RpcLog } from './log-decoding';

/** A block header, as much of it as following needs. */
export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  time: Date;
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

function toHeader(block: RpcBlock): BlockHeader {
  return {
    number: Number(block.number),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    time: new Date(Number(block.timestamp) * 1000),
  };
}

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * The JSON-RPC calls a follower makes, raw: logs are decoded by log-decoding.ts, and viem's
 * formatting of each log into objects with bigints would only cost time on busy ranges. Calls
 * made together (the headers of a range's blocks) leave in one HTTP batch.
 */
export class ChainNode {
  constructor(private readonly client: PublicClient) {}

  async chainId(): Promise<number> {
    return Number(await this.client.request({ method: 'eth_chainId' }));
  }

  async head(): Promise<number> {
    return Number(await this.client.request({ method: 'eth_blockNumber' }));
  }

  /** The canonical block at `number`, or null when the node has none there (yet). */
  async header(number: number): Promise<BlockHeader | null> {
    const block = (await this.client.request({
      method: 'eth_getBlockByNumber',
      params: [hex(number) as `0x${string}`, false],
    })) as unknown as RpcBlock | null;
    return block ? toHeader(block) : null;
  }

  async headers(numbers: number[]): Promise<Map<number, BlockHeader | null>> {
    const unique = [...new Set(numbers)];
    const found = await Promise.all(unique.map((n) => this.header(n)));
    return new Map(unique.map((n, i) => [n, found[i]]));
  }

  /**
   * Logs of [fromBlock, toBlock] whose topics match `topics` (positions; an array at a position
   * is an OR; null matches anything), from any contract unless `address` is given.
   */
  async logs(fromBlock: number, toBlock: number, topics: (string | string[] | null)[], address?: string[]): Promise<RpcLog[]> {
    const filter: Record<string, unknown> = { fromBlock: hex(fromBlock), toBlock: hex(toBlock), topics };
    if (address) filter.address = address;
    return (await this.client.request({ method: 'eth_getLogs', params: [filter as never] })) as unknown as RpcLog[];
  }

  /**
   * Logs of exactly the block `blockHash` (EIP-234), so that the pieces of one block read by
   * several calls all come from the same block even if the chain reorganises meanwhile. Sent as
   * an HTTP request of its own: in a batch, one large answer would fail its neighbours too.
   */
  async logsOfBlock(blockHash: string, topics: (string | string[] | null)[]): Promise<RpcLog[]> {
    return (await this.alone({ method: 'eth_getLogs', params: [{ blockHash, topics }] })) as RpcLog[];
  }

  /** The hashes of the block's transactions, or null when the node no longer has that block. */
  async blockTransactions(blockHash: string): Promise<string[] | null> {
    const block = (await this.alone({ method: 'eth_getBlockByHash', params: [blockHash, false] })) as { transactions: string[] } | null;
    return block ? block.transactions.map((t) => t.toLowerCase()) : null;
  }

  /** A transaction's receipt (its block and logs), alone in its HTTP request; null when unknown. */
  async receipt(transactionHash: string): Promise<{ blockHash: string; logs: RpcLog[] } | null> {
    return (await this.alone({ method: 'eth_getTransactionReceipt', params: [transactionHash] })) as {
      blockHash: string;
      logs: RpcLog[];
    } | null;
  }

  /**
   * Whether a failed read was refused for the size of its answer (see isRangeRefusal) or timed out
   * while the node still answers a light call at once: a node that is down is not a heavy answer.
   */
  async refusedAsTooLarge(error: unknown): Promise<boolean> {
    if (isRangeRefusal(error)) return true;
    if (!isTimeout(error)) return false;
    return this.head().then(
      () => true,
      () => false,
    );
  }

  /** One call in an HTTP request of its own: the transport batches only calls sharing a signal. */
  private alone(call: { method: string; params: unknown[] }): Promise<unknown> {
    return this.client.request(call as never, { signal: new AbortController().signal });
  }
}

/** Whether the call did not answer within the client's timeout. */
export function isTimeout(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof TimeoutError) !== null;
}

const RANGE_REFUSAL = /range|limit|too many|exceed|max(imum)? .*results|response size|query returned more than|block range/i;

/**
 * Whether the node refused an eth_getLogs because of its span or the size of its answer (each
 * provider words and codes it differently), as opposed to not answering at all: a refusal is
 * answered by halving the range, an unreachable node by backing off.
 */
export function isRangeRefusal(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  // The client reads at most 10 MiB per answer (viem's bound, kept: a busy range must not take the
  // process's memory); a range whose logs exceed it is split like a refused one.
  if (error.walk((e) => e instanceof ResponseBodyTooLargeError)) return true;
  if (error.walk((e) => e instanceof TimeoutError)) return false;
  const http = error.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
  if (http) {
    if (http.status === 413) return true;
    // A node that is down, or a gateway in front of it failing, is not a refusal of the range.
    if (http.status === undefined || http.status === 429 || http.status >= 500) return false;
  }
  const rpc = error.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
  if (rpc) return rpc.code === -32005 || rpc.code === -32602 || rpc.code === -32000 || RANGE_REFUSAL.test(rpc.details ?? rpc.message);
  return RANGE_REFUSAL.test(error.details ?? '');
}
