import { WalletsService } from '../wallets/wallets.service';
import { ChainNode } from './chain-node';
import { RpcLog } from './log-decoding';
import { LogPiece, logInPiece, mergeLogs, pieceTopics, piecesFor, splitPiece } from './log-pieces.rules';

/** Watched addresses per OR-list at one topic position (nodes bound the list; a refused one is halved). */
export const ADDRESS_CHUNK = 500;
/** Watched addresses read from the database at a time, so that memory does not grow with the wallets. */
const ADDRESS_PAGE = 4000;
/** Pieces (or receipts) asked for at once, each in its own HTTP request. */
const CONCURRENCY = 4;

export interface BlockByAddress {
  /** The block's NFT logs that name a watched address at a party position, in log order. */
  logs: RpcLog[];
  /** eth_getLogs calls made. */
  pieces: number;
  /** Transactions read by receipt because a piece of one address and one event was still refused. */
  receipts: number;
  /**
   * Transactions whose logs could be read neither by address nor by receipt (the receipt itself
   * over the client's limit): their movements of the pieces that needed them are not in `logs`.
   */
  unreadable: string[];
}

/**
 * Reads one block that eth_getLogs cannot answer whole (see unreadableLogsAction) by the watched
 * addresses instead: for each party position, the addresses an OR-list at a time, every call
 * pinned to the block's hash. A piece still too large is split (fewer addresses, then one event
 * at a time); a piece of one address and one event still too large is read from the block's
 * transaction receipts, one transaction at a time. Nothing is retried whole. Logs without parties
 * (any contract can emit the bare topics) match no piece and are never read. Null when the node no
 * longer has the block (a reorg): the caller reads the chain again.
 */
export async function readBlockByAddress(node: ChainNode, wallets: WalletsService, blockHash: string): Promise<BlockByAddress | null> {
  const found: RpcLog[][] = [];
  const deepest: LogPiece[] = [];
  let pieces = 0;
  let after: string | null = null;
  for (;;) {
    const page = await wallets.watchedAddressesAfter(after, ADDRESS_PAGE);
    let queue = piecesFor(page, ADDRESS_CHUNK);
    while (queue.length > 0) {
      const round = queue;
      queue = [];
      await eachLimited(round, CONCURRENCY, async (piece) => {
        pieces += 1;
        try {
          found.push(await node.logsOfBlock(blockHash, pieceTopics(piece)));
        } catch (error) {
          if (!(await node.refusedAsTooLarge(error))) throw error;
          const smaller = splitPiece(piece);
          if (smaller) queue.push(...smaller);
          else deepest.push(piece);
        }
      });
    }
    if (page.length < ADDRESS_PAGE) break;
    after = page[page.length - 1];
  }

  let receipts = 0;
  const unreadable: string[] = [];
  if (deepest.length > 0) {
    const transactions = await node.blockTransactions(blockHash);
    if (transactions === null) return null;
    let changed = false;
    await eachLimited(transactions, CONCURRENCY, async (hash) => {
      receipts += 1;
      try {
        const receipt = await node.receipt(hash);
        if (receipt === null || receipt.blockHash.toLowerCase() !== blockHash.toLowerCase()) {
          changed = true;
          return;
        }
        found.push(receipt.logs.filter((log) => deepest.some((piece) => logInPiece(log, piece))));
      } catch (error) {
        if (!(await node.refusedAsTooLarge(error))) throw error;
        unreadable.push(hash);
      }
    });
    if (changed) return null;
  }
  return { logs: mergeLogs(found), pieces, receipts, unreadable };
}

/** Runs `work` over `items`, at most `limit` at a time; the first failure fails the whole and starts nothing more. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      await work(items[next++]).catch((error: unknown) => {
        failed = true;
        throw error;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
