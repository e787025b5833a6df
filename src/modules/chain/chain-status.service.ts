import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { unprocessable } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { WalletsService } from '../wallets/wallets.service';
import { ChainCursor, ChainCursorRepository } from './chain-cursor.repository';
import { ChainFigures, registerChainFiguresSampler } from './chain-metrics';
import { WalletSync, WalletSyncRepository } from './wallet-sync.repository';
import { syncRangeRefusal } from './wallet-sync.rules';

/** How long one reading of the cursors serves /metrics (its gauges are collected one by one). */
const FIGURES_TTL_MS = 1000;

/** Figures of one chain from its cursor; everything null before its follower's first step. */
export function chainFigures(chainId: number, cursor: ChainCursor | null): ChainFigures {
  const headBlock = cursor?.headBlock ?? null;
  const applied = cursor?.appliedBlock ?? null;
  const appliedBlock = applied !== null && applied >= 0 ? applied : null;
  const lagBlocks = headBlock !== null && applied !== null ? Math.max(0, headBlock - applied) : null;
  const lagSeconds =
    cursor?.headBlockTime && cursor.appliedBlockTime
      ? Math.max(0, Math.round((cursor.headBlockTime.getTime() - cursor.appliedBlockTime.getTime()) / 1000))
      : null;
  return { chainId, headBlock, appliedBlock, lagBlocks, lagSeconds, lastError: cursor?.lastError ?? null };
}

/**
 * What API processes know about the chains: the followers' figures (read from the cursors, never
 * from a node, so an unreachable node cannot slow or fail a request) and wallet replays.
 */
@Injectable()
export class ChainStatusService implements OnModuleInit, OnModuleDestroy {
  private unregister: (() => void) | null = null;
  private cached: { at: number; figures: Promise<ChainFigures[]> } | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly cursors: ChainCursorRepository,
    private readonly syncs: WalletSyncRepository,
    private readonly wallets: WalletsService,
  ) {}

  onModuleInit(): void {
    if (this.config.chain.rpcUrls.length === 0) return;
    this.unregister = registerChainFiguresSampler(() => {
      const now = Date.now();
      if (!this.cached || now - this.cached.at > FIGURES_TTL_MS) {
        const figures = this.figures();
        figures.catch(() => (this.cached = null));
        this.cached = { at: now, figures };
      }
      return this.cached.figures;
    });
  }

  onModuleDestroy(): void {
    this.unregister?.();
  }

  /** Every configured chain, in CHAIN_RPC_URLS order. */
  async figures(): Promise<ChainFigures[]> {
    const cursors = new Map((await this.cursors.all()).map((c) => [c.chainId, c]));
    return this.config.chain.rpcUrls.map(({ chainId }) => chainFigures(chainId, cursors.get(chainId) ?? null));
  }

  /**
   * Asks for a replay of a wallet's history on a chain from `fromBlock`; the same request while
   * one is open answers that one.
   */
  async requestSync(organizationId: string, walletId: string, chainId: number, fromBlock: number): Promise<WalletSync> {
    const address = await this.wallets.walletAddress(organizationId, walletId);
    if (!this.config.chain.rpcUrls.some((rpc) => rpc.chainId === chainId)) {
      throw unprocessable('UNKNOWN_CHAIN', `Chain ${chainId} is not followed by this service.`);
    }
    if (address === null) {
      throw unprocessable('WALLET_HAS_NO_ADDRESS', `Wallet ${walletId} has no address, so it has no history on a chain.`);
    }
    const cursor = await this.cursors.find(chainId);
    const refusal = syncRangeRefusal(cursor?.appliedBlock ?? null, fromBlock);
    if (refusal !== null) throw unprocessable('SYNC_RANGE_TOO_LARGE', refusal);
    return this.syncs.openOrExisting({ organizationId, walletId, chainId, address, fromBlock });
  }
}
