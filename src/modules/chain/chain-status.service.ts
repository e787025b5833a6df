import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { ChainCursor, ChainCursorRepository } from './chain-cursor.repository';
import { ChainFigures, registerChainFiguresSampler } from './chain-metrics';

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
 * from a node, so an unreachable node cannot slow or fail a request).
 */
@Injectable()
export class ChainStatusService implements OnModuleInit, OnModuleDestroy {
  private unregister: (() => void) | null = null;
  private cached: { at: number; figures: Promise<ChainFigures[]> } | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly cursors: ChainCursorRepository,
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
}
