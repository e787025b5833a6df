import { Logger } from '@nestjs/common';
import type { PublicClient } from 'viem';
import { Periodic, RunOutcome } from '../../common/scheduling/periodic';
import { workerTransaction } from '../../database/statement-bounds';
import { shortReason } from '../chain/chain-clients';
import { BlockHeader, ChainNode } from '../chain/chain-node';
import { decodeTransferLogs, NFT_EVENT_TOPICS, RpcLog } from '../chain/log-decoding';
import { airdropCandidates, applyTransfers, checkpointDue, chunksByBlock, IndexedTransfer, touched } from './contract-index.rules';
import { ContractLedgerRepository, KeptBlock } from './contract-ledger.repository';
import { IndexedContract, IndexedContractRepository } from './indexed-contract.repository';
import { probeStandard } from './standard-probe';
import { afterAcceptance, afterRefusal, firstRange, LogRange, LogRangePolicy } from '../chain/log-range.rules';
import { MASS_AIRDROP_RECIPIENTS } from '../spam/spam.rules';
import type { SpamService } from '../spam/spam.service';
import { ChainReaderDeps, Retry } from '../chain/chain-reader';
import { LEASE_MS, MAX_BACKOFF_MS, RETRY_MS } from '../chain/following-timing';

/**
 * Blocks per eth_getLogs: one contract's logs are few per block, so ranges are wide at first;
 * halved when refused, doubled again after 8 accepted in a row.
 */
const RANGES: LogRangePolicy = { largest: 50_000, regrowAfter: 8 };
/** Transfers applied between two checkpoint decisions: bounds the changes a holders page reads past its checkpoint. */
const CHUNK_TRANSFERS = 4096;

export interface ContractIndexerDeps extends ChainReaderDeps {
  client: PublicClient;
  contracts: IndexedContractRepository;
  ledger: ContractLedgerRepository;
  /** Told, on the step's transaction, of every transaction that may be a mass airdrop of the contract. */
  spam: Pick<SpamService, 'judgeTransaction'>;
}

/**
 * Indexes every registered contract of one chain: while holding a contract's lease, reads the NFT
 * transfer logs of that contract alone (eth_getLogs by address) over wide ranges up to head −
 * CHAIN_CONFIRMATIONS, and records them with the balances, holder totals and checkpoints they
 * change in the transaction that moves the contract's cursor, so a stop at any point resumes
 * with nothing missed or counted twice. Before each range it compares the hash of the last
 * indexed block with the node's, and takes back everything above the common ancestor of a reorg.
 */
export class ContractIndexer {
  private readonly logger: Logger;
  private readonly loop: Periodic;
  private readonly node: ChainNode;
  private readonly ranges = new Map<string, LogRange>();
  /** Whether the last step held any contract: with none, a new head has nothing to index. */
  private indexing = false;

  constructor(private readonly deps: ContractIndexerDeps) {
    this.logger = new Logger(`ContractIndexer ${deps.chainId}`);
    this.node = new ChainNode(deps.client);
    const pollMs = deps.config.chain.pollIntervalMs;
    this.loop = new Periodic({
      runAtStart: true,
      run: () => this.step(),
      intervalMs: pollMs,
      backoff: { baseMs: Math.max(pollMs, 100), maxMs: MAX_BACKOFF_MS },
      logger: this.logger,
      failure: 'indexing step failed, retrying with backoff',
      reason: shortReason,
      logEvery: 20,
      recovered: 'the node answers again; indexing resumes',
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A contract was registered: index it now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** The node pushed a new head: index it now, unless no contract is held here or the node is failing (the backoff holds). */
  newHead(): void {
    if (this.indexing && !this.loop.failing) this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.deps.contracts.releaseAll(this.deps.chainId, this.deps.owner).catch(() => undefined);
  }

  private async step(): Promise<RunOutcome> {
    try {
      const outcome = await this.tick();
      if (outcome === 'changed') return { againInMs: Math.min(this.deps.config.chain.pollIntervalMs, RETRY_MS) };
      return outcome === 'more' ? 'busy' : 'idle';
    } catch (error) {
      if (error instanceof Retry) return { againInMs: Math.min(this.deps.config.chain.pollIntervalMs, RETRY_MS) };
      throw error;
    }
  }

  /**
   * One range of each leased contract that is behind: 'more' when any has more to do at once,
   * 'changed' when a step met a changing chain (try again shortly). A contract whose step fails
   * does not hold up the others; the failure is recorded on it, and thrown (for the backoff) only
   * when no other contract moved.
   */
  private async tick(): Promise<'more' | 'changed' | 'idle'> {
    const { contracts, chainId, owner } = this.deps;
    const leased = await contracts.leaseAll(chainId, owner, LEASE_MS);
    this.indexing = leased.length > 0;
    if (leased.length === 0) return 'idle';
    const head = await this.node.header(await this.node.head());
    if (!head) throw new Retry();
    let more = false;
    let changed = false;
    let failure: Error | null = null;
    for (const contract of leased) {
      try {
        more = (await this.stepContract(contract, head)) || more;
      } catch (error) {
        if (error instanceof Retry) {
          changed = true;
          continue;
        }
        failure ??= error instanceof Error ? error : new Error(String(error));
        await contracts.recordError(contract.id, shortReason(error)).catch(() => undefined);
      }
    }
    if (failure !== null && !more) throw failure;
    return more ? 'more' : changed ? 'changed' : 'idle';
  }

  /** One step of one contract; true when it has more to do at once. */
  private async stepContract(contract: IndexedContract, head: BlockHeader): Promise<boolean> {
    const { config, contracts, em } = this.deps;
    if (!contract.standardKnown) {
      await contracts.recordStandard(contract.id, await probeStandard(this.deps.client, contract.address));
    }
    if (contract.indexedHash !== null) {
      const indexed = contract.indexedBlock > head.number ? null : await this.node.header(contract.indexedBlock);
      if (indexed?.hash !== contract.indexedHash) {
        await this.unwind(contract, head);
        return true;
      }
    }
    const target = head.number - config.chain.confirmations;
    if (contract.indexedBlock >= target) {
      if (contract.status !== 'live') {
        await workerTransaction(em, config, async (tx) => {
          const locked = await contracts.lockForStep(tx, contract.id, this.deps.owner);
          if (!locked || locked.indexedBlock !== contract.indexedBlock) return;
          await contracts.moveTo(tx, contract.id, { ...locked, live: true });
        });
      }
      return false;
    }
    const from = contract.indexedBlock + 1;
    const to = Math.min(target, from + this.rangeOf(contract.id).size - 1);
    await this.applyRange(contract, from, to, target);
    this.ranges.set(contract.id, afterAcceptance(this.rangeOf(contract.id), RANGES));
    return to < target;
  }

  private rangeOf(contractId: string): LogRange {
    return this.ranges.get(contractId) ?? firstRange(RANGES);
  }

  /**
   * The contract's logs of [from, to]. A range the node refuses (or whose answer is over the
   * client's 10 MiB) is halved; a single block still refused is read one event topic at a time.
   */
  private async readLogs(contract: IndexedContract, from: number, to: number): Promise<RpcLog[]> {
    try {
      return await this.node.logs(from, to, [[...NFT_EVENT_TOPICS]], [contract.address]);
    } catch (error) {
      if (!(await this.node.refusedAsTooLarge(error))) throw error;
      if (to > from) {
        const range = afterRefusal(from, to);
        this.ranges.set(contract.id, range);
        this.logger.warn(`the node refused eth_getLogs over ${to - from + 1} blocks; trying ${range.size} (${shortReason(error)})`);
        throw new Retry();
      }
      this.logger.warn(`block ${from} of ${contract.address} cannot be read whole (${shortReason(error)}); reading it by event`);
      const parts = await Promise.all(NFT_EVENT_TOPICS.map((topic) => this.node.logs(from, to, [topic], [contract.address])));
      return parts.flat().sort((a, b) => Number(a.logIndex) - Number(b.logIndex));
    }
  }

  private async applyRange(contract: IndexedContract, from: number, to: number, target: number): Promise<void> {
    const { chainId, config, contracts, ledger, owner, em } = this.deps;
    // The end block is read before and after the logs: the same hash means the logs are of one chain.
    const endBefore = await this.node.header(to);
    if (!endBefore) throw new Retry();
    const logs = await this.readLogs(contract, from, to);
    const transfers: IndexedTransfer[] = [];
    const times = new Map<number, Date>();
    const hashes = new Map<number, string>();
    for (const log of logs) {
      if (log.blockNumber !== null && log.blockTimestamp) times.set(Number(log.blockNumber), new Date(Number(log.blockTimestamp) * 1000));
    }
    for (const m of decodeTransferLogs(chainId, logs)) {
      if (m.contractAddress !== contract.address) continue;
      if ((hashes.get(m.blockNumber) ?? m.blockHash) !== m.blockHash) throw new Retry();
      hashes.set(m.blockNumber, m.blockHash);
      const { blockNumber, blockHash, transactionHash, logIndex, batchIndex, from: sender, to: recipient, blockchainTokenId, amount } = m;
      transfers.push({
        blockNumber,
        blockHash,
        transactionHash,
        logIndex,
        batchIndex,
        from: sender,
        to: recipient,
        tokenId: blockchainTokenId,
        amount,
      });
    }
    const untimed = [...hashes.keys()].filter((n) => !times.has(n));
    const headers = await this.node.headers([from, to, ...untimed]);
    const first = headers.get(from);
    const end = headers.get(to);
    if (!first || !end || end.hash !== endBefore.hash) throw new Retry();
    // The range must continue the indexed chain; if not, the next step's check finds the reorg.
    if (contract.indexedHash !== null && first.parentHash !== contract.indexedHash) throw new Retry();
    for (const n of untimed) {
      const header = headers.get(n);
      if (!header || header.hash !== hashes.get(n)) throw new Retry();
      times.set(n, header.time);
    }
    const kept = new Map<number, KeptBlock>();
    for (const [n, hash] of hashes) kept.set(n, { blockNumber: n, blockHash: hash, blockTime: times.get(n)! });
    for (const h of [first, end]) kept.set(h.number, { blockNumber: h.number, blockHash: h.hash, blockTime: h.time });
    const isFirst = from === contract.fromBlock;

    const done = await workerTransaction(em, config, async (tx) => {
      const locked = await contracts.lockForStep(tx, contract.id, owner);
      if (!locked || locked.indexedBlock !== contract.indexedBlock) return false;
      let changesSince = locked.checkpointChanges;
      let checkpointSize = locked.checkpointSize;
      await ledger.insertTransfers(tx, contract.id, transfers);
      for (const hash of airdropCandidates(transfers, MASS_AIRDROP_RECIPIENTS)) await this.deps.spam.judgeTransaction(chainId, hash, tx);
      // In chunks that never split a block, each ending at a block where a checkpoint may be taken.
      for (const chunk of chunksByBlock(transfers, CHUNK_TRANSFERS)) {
        const { pairs, holders } = touched(chunk);
        const balances = await ledger.balancesOf(tx, contract.id, pairs);
        const totals = await ledger.totalsOf(tx, contract.id, holders);
        const changes = applyTransfers(chunk, balances, totals);
        await ledger.writeBalances(tx, contract.id, balances);
        await ledger.insertHolderChanges(tx, contract.id, changes);
        changesSince += changes.length;
        if (checkpointDue(changesSince, checkpointSize)) {
          checkpointSize = await ledger.writeCheckpoint(tx, contract.id, chunk[chunk.length - 1].blockNumber);
          changesSince = 0;
        }
      }
      await ledger.storeBlocks(tx, contract.id, [...kept.values()]);
      await contracts.moveTo(tx, contract.id, {
        indexedBlock: to,
        indexedHash: end.hash,
        fromBlockTime: isFirst ? first.time : null,
        live: to >= target,
        checkpointChanges: changesSince,
        checkpointSize,
      });
      return true;
    });
    if (!done) throw new Retry();
  }

  /**
   * The indexed block is no longer the node's: walk the kept hashes down to the deepest block the
   * node still has, and take back everything above it in one transaction. The next steps index
   * the canonical blocks.
   */
  private async unwind(contract: IndexedContract, head: BlockHeader): Promise<void> {
    const { config, contracts, ledger, owner, em: rootEm } = this.deps;
    const em = rootEm.fork();
    let ancestor: { blockNumber: number; blockHash: string | null } | null = null;
    let below = contract.indexedBlock;
    while (ancestor === null) {
      const page = await ledger.keptBlocksDown(em, contract.id, below, 64);
      if (page.length === 0) break;
      const onNode = await this.node.headers(page.filter((b) => b.blockNumber <= head.number).map((b) => b.blockNumber));
      for (const block of page) {
        if (onNode.get(block.blockNumber)?.hash === block.blockHash) {
          ancestor = block;
          break;
        }
      }
      below = page[page.length - 1].blockNumber - 1;
    }
    // No kept block survived: start the contract over from its fromBlock.
    const target = ancestor ?? { blockNumber: contract.fromBlock - 1, blockHash: null };
    const removed = await workerTransaction(em, config, async (tx) => {
      const locked = await contracts.lockForStep(tx, contract.id, owner);
      if (!locked || locked.indexedBlock !== contract.indexedBlock) return null;
      const count = await ledger.unwindAbove(tx, contract.id, target.blockNumber);
      await contracts.moveTo(tx, contract.id, {
        indexedBlock: target.blockNumber,
        indexedHash: target.blockHash,
        checkpointChanges: locked.checkpointChanges,
      });
      return count;
    });
    if (removed === null) throw new Retry();
    this.logger.warn(
      `reorg: block ${contract.indexedBlock} of ${contract.address} is no longer canonical; unwound to block ${target.blockNumber}, ` +
        `${removed} transfer(s) taken back`,
    );
  }
}
