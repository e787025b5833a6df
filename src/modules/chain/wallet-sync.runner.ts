import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import { pad } from 'viem';
import { AppConfig } from '../../config/app-config';
import { ChainMovement, ChainMovementsService } from '../transactions/chain-movements.service';
import { shortReason } from './chain-clients';
import { ChainCursorRepository } from './chain-cursor.repository';
import type { StartedCursor } from './chain-follower';
import { ChainNode, isRangeRefusal } from './chain-node';
import { decodeTransferLogs, RpcLog, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC } from './log-decoding';
import { WalletSyncRepository } from './wallet-sync.repository';
import { nextInTurn, syncEndBlock } from './wallet-sync.rules';
import { workerTransaction } from '../../database/statement-bounds';

/** A replay failing this many steps in a row is given up (status failed, its error kept). */
const MAX_SYNC_FAILURES = 10;

/**
 * Replays one wallet's history (POST /v1/wallets/{walletId}/sync) from its start block up to the
 * block the follower had applied when the replay began, in the follower's loop once the chain is
 * caught up, one range per step, the open replays of all organizations taking turns. It records
 * for the organization that asked only. Unlike the follower, a replay reads only its wallet's logs
 * (the address as a topic): it is one address over a long, mostly idle span. Recording is
 * exactly-once, so a replay over blocks already followed, or asked for twice, records nothing twice.
 */
@Injectable()
export class WalletSyncRunner {
  private readonly logger = new Logger('WalletSync');
  private readonly ranges = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  /** The organization each chain served last, where its next turn starts. */
  private readonly lastServed = new Map<number, string>();

  constructor(
    private readonly config: AppConfig,
    private readonly em: EntityManager,
    private readonly syncs: WalletSyncRepository,
    private readonly cursors: ChainCursorRepository,
    private readonly movements: ChainMovementsService,
  ) {}

  /**
   * One range of the open replay whose turn it is on the chain; true when there is more to do at
   * once. Organizations take turns (nextInTurn), so however many long replays one organization
   * has open, another's waits at most one range per organization.
   */
  async step(chainId: number, node: ChainNode, cursor: StartedCursor, owner: string): Promise<boolean> {
    const sync = nextInTurn(await this.syncs.openHeads(chainId), this.lastServed.get(chainId) ?? null);
    if (!sync) return false;
    this.lastServed.set(chainId, sync.organizationId);
    try {
      const more = await this.replayRange(sync.id, chainId, node, cursor, owner);
      this.failures.delete(sync.id);
      return more;
    } catch (error) {
      const failures = (this.failures.get(sync.id) ?? 0) + 1;
      this.failures.set(sync.id, failures);
      const final = failures >= MAX_SYNC_FAILURES;
      await this.syncs.fail(sync.id, shortReason(error), final).catch(() => undefined);
      this.logger.warn(`wallet sync ${sync.id} step failed (${failures} in a row${final ? ', given up' : ''}): ${shortReason(error)}`);
      if (final) this.failures.delete(sync.id);
      return false;
    }
  }

  private async replayRange(id: string, chainId: number, node: ChainNode, cursor: StartedCursor, owner: string): Promise<boolean> {
    let found = await this.syncs.findOpen(id);
    if (found?.toBlock === null) {
      await this.syncs.begin(found.id, syncEndBlock(cursor.appliedBlock, found.fromBlock));
      found = await this.syncs.findOpen(id);
    }
    if (!found) return true;
    const sync = found;
    const toBlock = sync.toBlock!;
    const from = sync.nextBlock;
    const range = this.ranges.get(sync.id) ?? this.config.chain.maxBlockRange;
    const to = Math.min(toBlock, from + range - 1);
    let movements: ChainMovement[] = [];
    if (from <= to) {
      let logs: RpcLog[];
      try {
        logs = await this.walletLogs(node, sync.address, from, to);
      } catch (error) {
        if (to > from && isRangeRefusal(error)) {
          this.ranges.set(sync.id, Math.max(1, Math.floor((to - from + 1) / 2)));
          return true;
        }
        throw error;
      }
      const decoded = decodeTransferLogs(chainId, logs).filter((m) => m.from === sync.address || m.to === sync.address);
      const headers = await node.headers(decoded.map((m) => m.blockNumber));
      movements = decoded.map((m) => {
        const header = headers.get(m.blockNumber);
        if (!header || header.hash !== m.blockHash) throw new Error(`block ${m.blockNumber} changed while it was read; reading again`);
        return { ...m, blockTimestamp: header.time };
      });
    }
    const done = to >= toBlock;
    const recorded = await workerTransaction(this.em, this.config, async (em) => {
      // Behind the follower's lock: a reorg unwound meanwhile must not meet movements of the old fork.
      const locked = await this.cursors.lockForStep(em, chainId, owner);
      if (!locked) return null;
      const stored = await this.cursors.storedHashes(em, chainId, [...new Set(movements.map((m) => m.blockNumber))]);
      if (movements.some((m) => stored.has(m.blockNumber) && stored.get(m.blockNumber) !== m.blockHash)) return null;
      if (locked.appliedBlock === null || movements.some((m) => m.blockNumber > locked.appliedBlock!)) return null;
      const open = await this.syncs.lockOpen(em, sync.id);
      if (!open || open.nextBlock !== from) return null;
      // For the organization that asked only: another's wallet at the address has not asked for its history.
      const result = await this.movements.record(em, movements, { organizationId: open.organizationId });
      await this.syncs.advance(em, sync.id, to + 1, result.recorded, done);
      return result.recorded;
    });
    if (recorded === null) return false;
    if (done) {
      this.ranges.delete(sync.id);
      this.logger.log(`wallet sync ${sync.id} done: blocks ${sync.fromBlock}..${toBlock}`);
    }
    return true;
  }

  /**
   * The wallet's NFT transfer logs over a range: four topic filters (ERC-721 has the parties at
   * topics 1 and 2, ERC-1155 at 2 and 3), merged in chain order.
   */
  private async walletLogs(node: ChainNode, address: string, from: number, to: number): Promise<RpcLog[]> {
    const topic = pad(address as `0x${string}`, { size: 32 });
    const erc1155 = [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];
    const answers = await Promise.all([
      node.logs(from, to, [TRANSFER_TOPIC, topic]),
      node.logs(from, to, [TRANSFER_TOPIC, null, topic]),
      node.logs(from, to, [erc1155, null, topic]),
      node.logs(from, to, [erc1155, null, null, topic]),
    ]);
    const byKey = new Map<string, RpcLog>();
    for (const log of answers.flat()) byKey.set(`${log.blockHash}:${log.logIndex}`, log);
    return [...byKey.values()].sort((a, b) => Number(a.blockNumber) - Number(b.blockNumber) || Number(a.logIndex) - Number(b.logIndex));
  }
}
