import { Logger } from '@nestjs/common';
import { Periodic, RunOutcome } from '../../common/scheduling/periodic';
import { ChainMovement, ChainMovementsService } from '../transactions/chain-movements.service';
import { WalletsService } from '../wallets/wallets.service';
import { chainIdMismatchMessage, shortReason } from './chain-clients';
import { ChainCursor, ChainCursorRepository, StoredBlock } from './chain-cursor.repository';
import {
  chainBlocksApplied,
  chainBlocksReadByAddress,
  chainMovementsRecorded,
  chainMovementsReverted,
  chainNodeErrors,
  chainRangeRefusals,
  chainReorgs,
  chainUnreadableTransactions,
} from './chain-metrics';
import { BlockHeader, ChainNode } from './chain-node';
import { BlockByAddress, readBlockByAddress } from './block-by-address';
import { decodeTransferLogs, NFT_EVENT_TOPICS, RpcLog, touchesWatched, ZERO_ADDRESS } from './log-decoding';
import { unreadableLogsAction } from './log-pieces.rules';
import { afterAcceptance, afterRefusal, firstRange, LogRange, LogRangePolicy } from './log-range.rules';
import { workerTransaction } from '../../database/statement-bounds';
import { ChainReaderDeps, Retry } from './chain-reader';
import { LEASE_MS, MAX_BACKOFF_MS, RETRY_MS } from './following-timing';

/** A cursor past its first start. */
export type StartedCursor = ChainCursor & { appliedBlock: number };

/** A standby instance tries to take the lease at least this often (takeover within LEASE_MS + this). */
const STANDBY_POLL_MS = 5_000;
/** Applied block hashes kept below the applied block: the deepest reorg the follower can unwind exactly. */
const KEPT_BLOCK_DEPTH = 4096;
/** Consecutive accepted ranges before a halved range is allowed to double again. */
const REGROW_AFTER = 16;

export interface FollowerDeps extends ChainReaderDeps {
  node: ChainNode;
  cursors: ChainCursorRepository;
  movements: ChainMovementsService;
  wallets: WalletsService;
  /** Work to do with the lease held once the chain is caught up (wallet history replays). */
  whenCaughtUp?: (cursor: StartedCursor) => Promise<boolean>;
  /** Told of every head the follower reads itself (a pushed-heads subscription checks it still pushes). */
  headRead?: (head: number) => void;
}

/**
 * Follows one chain: while holding the chain's lease, reads the NFT transfer logs of the next
 * range of confirmed blocks with one eth_getLogs by topic (no address filter: the parties of what
 * was read are then looked up among the watched addresses), and records the movements that touch
 * a watched address in the same database transaction that advances the cursor, so a follower stopped at any point
 * resumes with nothing missed and nothing recorded twice. Before each step it compares the hash
 * of the last applied block with the node's, and unwinds a reorg to the common ancestor. A range
 * the node cannot answer whole is halved; a single block it cannot answer whole (anyone can fill
 * one with logs under the NFT topics) is read by watched address (block-by-address.ts), so one
 * block never stops the chain's following.
 */
export class ChainFollower {
  private readonly logger: Logger;
  private readonly loop: Periodic;
  private chainIdChecked = false;
  private readonly rangePolicy: LogRangePolicy;
  private range: LogRange;
  /** Whether this instance holds the chain's lease (as of its last step). */
  leading = false;

  constructor(private readonly deps: FollowerDeps) {
    this.logger = new Logger(`ChainFollower ${deps.chainId}`);
    this.rangePolicy = { largest: deps.config.chain.maxBlockRange, regrowAfter: REGROW_AFTER };
    this.range = firstRange(this.rangePolicy);
    const pollMs = deps.config.chain.pollIntervalMs;
    this.loop = new Periodic({
      runAtStart: true,
      run: () => this.step(),
      intervalMs: () => (this.leading ? pollMs : Math.min(pollMs, STANDBY_POLL_MS)),
      backoff: { baseMs: Math.max(pollMs, 100), maxMs: MAX_BACKOFF_MS },
      logger: this.logger,
      failure: 'step failed, retrying with backoff',
      // One line per failure: a node's errors carry its URL (often with an API key) and request bodies.
      reason: shortReason,
      logEvery: 20,
      recovered: 'the node answers again; following resumes',
    });
  }

  start(): void {
    this.loop.start();
  }

  /**
   * The node pushed a new head: step now rather than at the next poll. Only a wake: the step
   * reads the head, checks for a reorg and applies confirmed ranges as on a poll. A standby
   * instance (the lease is another's) and a follower backing off after failures keep their pace.
   */
  newHead(): void {
    if (this.leading && !this.loop.failing) this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    if (this.leading) await this.deps.cursors.releaseLease(this.deps.chainId, this.deps.owner).catch(() => undefined);
    this.leading = false;
  }

  private async step(): Promise<RunOutcome> {
    try {
      return (await this.tick()) ? 'busy' : 'idle';
    } catch (error) {
      // Not a failure, but not a busy loop either: whatever changed under the step settles first.
      if (error instanceof Retry) return { againInMs: Math.min(this.deps.config.chain.pollIntervalMs, RETRY_MS) };
      chainNodeErrors.inc({ chainId: String(this.deps.chainId) });
      if (this.leading) await this.deps.cursors.recordError(this.deps.chainId, this.deps.owner, shortReason(error)).catch(() => undefined);
      throw error;
    }
  }

  /** One step; true when there is more to do at once. */
  private async tick(): Promise<boolean> {
    const { node, chainId, config, cursors, owner } = this.deps;
    // The lease first (database only), so that the node's trouble shows on the chain's cursor.
    let cursor = await cursors.acquireLease(chainId, owner, LEASE_MS);
    if (!cursor && !(await cursors.find(chainId))) {
      await cursors.createIfMissing(chainId);
      cursor = await cursors.acquireLease(chainId, owner, LEASE_MS);
    }
    if (!cursor) {
      if (this.leading) this.logger.log('another instance holds this chain now');
      this.leading = false;
      return false;
    }
    // On a first start the block is known only once the node's head is read: `begin` names it.
    if (!this.leading)
      this.logger.log(
        cursor.appliedBlock === null
          ? `holding chain ${chainId}; first start on this chain`
          : `holding chain ${chainId}; following from block ${cursor.appliedBlock + 1}`,
      );
    this.leading = true;

    if (!this.chainIdChecked) {
      // Checked at start-up too, but a node unreachable then is checked before its first use.
      const nodeChainId = await node.chainId();
      const rpc = config.chain.rpcUrls.find((r) => r.chainId === chainId)!;
      if (nodeChainId !== chainId) throw new Error(chainIdMismatchMessage(rpc, nodeChainId));
      this.chainIdChecked = true;
    }
    const head = await node.header(await node.head());
    if (!head) throw new Retry();
    this.deps.headRead?.(head.number);
    await cursors.recordHead(chainId, owner, { block: head.number, time: head.time });
    if (cursor.appliedBlock === null) {
      await this.begin(head);
      return true;
    }
    const started = cursor as StartedCursor;

    if (started.appliedBlock >= 0 && started.appliedHash !== null) {
      const applied = started.appliedBlock > head.number ? null : await node.header(started.appliedBlock);
      if (applied?.hash !== started.appliedHash) {
        await this.unwind(started, head);
        return true;
      }
    }

    const target = head.number - config.chain.confirmations;
    if (started.appliedBlock >= target) {
      if (started.lastError !== null) await cursors.recordError(chainId, owner, null);
      return this.deps.whenCaughtUp ? this.deps.whenCaughtUp(started) : false;
    }
    const from = started.appliedBlock + 1;
    const to = Math.min(target, from + this.range.size - 1);
    await this.applyRange(started, from, to, head);
    return to < target;
  }

  /** The first start on a chain: begin at CHAIN_START_BLOCK, or at the head. */
  private async begin(head: BlockHeader): Promise<void> {
    const { node, chainId, config, cursors, em, owner } = this.deps;
    const start = Math.min(config.chain.startBlock ?? head.number, head.number + 1);
    const before = start > 0 ? await node.header(start - 1) : null;
    await cursors.begin(chainId, owner, { blockNumber: start - 1, blockHash: before?.hash ?? null, blockTime: before?.time ?? null });
    if (before) await cursors.storeBlocks(em, chainId, [{ blockNumber: before.number, blockHash: before.hash, blockTime: before.time }]);
    const why = config.chain.startBlock === null ? `the head at this first start` : 'CHAIN_START_BLOCK';
    this.logger.log(`holding chain ${chainId}; following from block ${start} (${why})`);
  }

  private async applyRange(cursor: StartedCursor, from: number, to: number, head: BlockHeader): Promise<void> {
    const { node, chainId, cursors, owner, config } = this.deps;
    const label = { chainId: String(chainId) };
    // The end block is read before and after the logs: if it changed, the logs may mix forks.
    const endBefore = await node.header(to);
    if (!endBefore) throw new Retry();
    let logs: RpcLog[];
    let byAddress: BlockByAddress | null = null;
    try {
      logs = await node.logs(from, to, [[...NFT_EVENT_TOPICS]]);
    } catch (error) {
      const action = unreadableLogsAction(to - from + 1, await node.refusedAsTooLarge(error));
      if (action === 'fail') throw error;
      if (action === 'halve') {
        this.range = afterRefusal(from, to);
        chainRangeRefusals.inc(label);
        this.logger.warn(`the node refused eth_getLogs over ${to - from + 1} blocks; trying ${this.range.size} (${shortReason(error)})`);
        throw new Retry();
      }
      // One block, still too large: read by watched address, never whole again.
      const trouble = `block ${from} cannot be read whole (${shortReason(error)}); reading it by watched address`;
      this.logger.warn(trouble);
      await cursors.recordError(chainId, owner, trouble);
      byAddress = await readBlockByAddress(node, this.deps.wallets, endBefore.hash);
      if (byAddress === null) throw new Retry();
      logs = byAddress.logs;
    }
    const all = decodeTransferLogs(chainId, logs);
    // Only the parties of what was read are looked up: the cost follows the movements, not the wallets.
    const parties = [...new Set(all.flatMap((m) => [m.from, m.to]))].filter((a) => a !== ZERO_ADDRESS);
    const watched = await this.deps.wallets.watchedAmong(parties);
    const decoded = all.filter((m) => touchesWatched(m, watched));
    const headers = await node.headers([from, to, ...decoded.map((m) => m.blockNumber)]);
    const end = headers.get(to);
    const first = headers.get(from);
    if (!end || !first || end.hash !== endBefore.hash) throw new Retry();
    // The range must continue the applied chain; if not, the next step's check finds the reorg.
    if (cursor.appliedHash !== null && first.parentHash !== cursor.appliedHash) throw new Retry();
    const movements: ChainMovement[] = [];
    for (const m of decoded) {
      const header = headers.get(m.blockNumber);
      if (!header || header.hash !== m.blockHash) throw new Retry();
      movements.push({ ...m, blockTimestamp: header.time });
    }
    const blocks = new Map<number, StoredBlock>();
    for (const n of [to, ...movements.map((m) => m.blockNumber)]) {
      const h = headers.get(n)!;
      blocks.set(n, { blockNumber: n, blockHash: h.hash, blockTime: h.time });
    }

    const result = await workerTransaction(this.deps.em, config, async (em) => {
      const locked = await cursors.lockForStep(em, chainId, owner);
      if (!locked || locked.appliedBlock !== cursor.appliedBlock) return null;
      const recorded = await this.deps.movements.record(em, movements);
      await cursors.storeBlocks(em, chainId, [...blocks.values()]);
      await cursors.forgetBlocks(em, chainId, { below: to - KEPT_BLOCK_DEPTH });
      await cursors.moveTo(em, chainId, blocks.get(to)!, { block: head.number, time: head.time }, LEASE_MS);
      return recorded;
    });
    if (result === null) throw new Retry();
    chainBlocksApplied.inc(label, to - from + 1);
    if (result.recorded > 0) chainMovementsRecorded.inc(label, result.recorded);
    if (byAddress) await this.reportByAddress(from, byAddress);
    this.range = afterAcceptance(this.range, this.rangePolicy);
  }

  /** What reading a block by address took, and what it could not read (kept in lastError until caught up). */
  private async reportByAddress(block: number, read: BlockByAddress): Promise<void> {
    const { chainId, cursors, owner } = this.deps;
    const label = { chainId: String(chainId) };
    chainBlocksReadByAddress.inc(label);
    this.logger.warn(
      `block ${block} read by watched address: ${read.pieces} eth_getLogs call(s)` +
        (read.receipts > 0 ? `, ${read.receipts} receipt(s)` : '') +
        `, ${read.logs.length} log(s) of watched addresses`,
    );
    if (read.unreadable.length > 0) {
      chainUnreadableTransactions.inc(label, read.unreadable.length);
      this.logger.error(
        `block ${block}: the NFT logs of transaction(s) ${read.unreadable.join(', ')} could be read neither by address nor from ` +
          'their receipts (each over the limits); their movements of the watched addresses in the pieces that needed them are not recorded',
      );
      // The step's move cleared the note it began with; this one stays until the chain is caught up.
      const trouble = `block ${block}: the NFT logs of ${read.unreadable.length} transaction(s) could not be read, by address or by receipt`;
      await cursors.recordError(chainId, owner, trouble).catch(() => undefined);
    }
  }

  /**
   * The applied block is no longer the node's: walk the kept hashes down to the deepest block
   * the node still has, revert every movement above it (newest first) and move the cursor there,
   * in one transaction. The next steps apply the canonical blocks.
   */
  private async unwind(cursor: StartedCursor, head: BlockHeader): Promise<void> {
    const { node, chainId, cursors, owner, em: rootEm, config } = this.deps;
    const em = rootEm.fork();
    let ancestor: StoredBlock | null = null;
    let lowest = cursor.appliedBlock;
    let below = cursor.appliedBlock;
    while (ancestor === null) {
      const page = await cursors.storedBlocksDown(em, chainId, below, 64);
      if (page.length === 0) break;
      const onNode = await node.headers(page.filter((b) => b.blockNumber <= head.number).map((b) => b.blockNumber));
      for (const block of page) {
        lowest = block.blockNumber;
        if (onNode.get(block.blockNumber)?.hash === block.blockHash) {
          ancestor = block;
          break;
        }
      }
      below = lowest - 1;
    }
    if (ancestor === null) {
      // Deeper than the kept hashes: restart below the deepest one known, trusting the node there.
      const n = Math.min(lowest, head.number + 1) - 1;
      const header = n >= 0 ? await node.header(n) : null;
      ancestor = header
        ? { blockNumber: n, blockHash: header.hash, blockTime: header.time }
        : { blockNumber: -1, blockHash: '', blockTime: null };
      this.logger.error(`reorg deeper than the ${KEPT_BLOCK_DEPTH} kept block hashes; unwinding to block ${ancestor.blockNumber}`);
    }
    const target = ancestor;
    const reverted = await workerTransaction(em, config, async (tx) => {
      const locked = await cursors.lockForStep(tx, chainId, owner);
      if (!locked || locked.appliedBlock !== cursor.appliedBlock) return null;
      const count = await this.deps.movements.revertFrom(tx, chainId, target.blockNumber + 1);
      await cursors.forgetBlocks(tx, chainId, { above: target.blockNumber });
      await cursors.moveTo(
        tx,
        chainId,
        { blockNumber: target.blockNumber, blockHash: target.blockHash === '' ? null : target.blockHash, blockTime: target.blockTime },
        { block: head.number, time: head.time },
        LEASE_MS,
      );
      return count;
    });
    if (reverted === null) throw new Retry();
    const label = { chainId: String(chainId) };
    chainReorgs.inc(label);
    if (reverted > 0) chainMovementsReverted.inc(label, reverted);
    this.logger.warn(
      `reorg: block ${cursor.appliedBlock} is no longer canonical; unwound to block ${target.blockNumber}, ${reverted} transaction(s) reverted`,
    );
  }
}
