import { counter, gauge } from '../../common/metrics';

const LABELS = ['chainId'] as const;

export const chainNodeErrors = counter(
  'chain_node_errors_total',
  'Failed steps of this process’s chain followers (node unreachable, refused, timed out)',
  LABELS,
);
export const chainMovementsRecorded = counter(
  'chain_movements_recorded_total',
  'Chain transactions recorded by this process (one per movement and organization)',
  LABELS,
);
export const chainBlocksApplied = counter('chain_blocks_applied_total', 'Blocks applied by this process’s chain followers', LABELS);
export const chainReorgs = counter('chain_reorgs_total', 'Reorgs unwound by this process’s chain followers', LABELS);
export const chainMovementsReverted = counter(
  'chain_movements_reverted_total',
  'Chain transactions reverted by reorgs in this process',
  LABELS,
);
export const chainRangeRefusals = counter('chain_range_refusals_total', 'eth_getLogs ranges a node refused (the range was halved)', LABELS);
export const chainBlocksReadByAddress = counter(
  'chain_blocks_read_by_address_total',
  'Single blocks whose NFT logs could not be read whole (answer over the client’s size limit, refused or timed out) and were read by watched address instead',
  LABELS,
);
export const chainUnreadableTransactions = counter(
  'chain_unreadable_transactions_total',
  'Transactions whose NFT logs of a watched address could be read neither by address nor from their receipt (both over the limits); their movements are not recorded',
  LABELS,
);
export const chainNewHeadsSubscribed = gauge(
  'chain_new_heads_subscribed',
  '1 while this process holds a newHeads subscription to the chain’s node (ws or wss URLs), 0 while it polls alone',
  LABELS,
);
export const chainNewHeadsPushed = counter('chain_new_heads_pushed_total', 'New heads the chain’s node pushed to this process', LABELS);
export const chainNewHeadsLost = counter(
  'chain_new_heads_lost_total',
  'newHeads subscriptions of this process lost (connection closed), refused by the node, or found to have stopped pushing; each is asked for again with backoff',
  LABELS,
);

/** What every process reports per followed chain, read from the cursors at scrape time. */
export interface ChainFigures {
  chainId: number;
  headBlock: number | null;
  appliedBlock: number | null;
  lagBlocks: number | null;
  lagSeconds: number | null;
  lastError: string | null;
}

const samplers = new Set<() => Promise<ChainFigures[]>>();

async function sample(): Promise<ChainFigures[] | null> {
  for (const sampler of samplers) {
    const figures = await sampler().catch(() => null);
    if (figures) return figures;
  }
  return null;
}

function sampled(name: string, help: string, pick: (f: ChainFigures) => number | null) {
  gauge(name, help, LABELS, async function collect() {
    const figures = await sample();
    if (!figures) return;
    this.reset();
    for (const f of figures) {
      const value = pick(f);
      if (value !== null) this.set({ chainId: String(f.chainId) }, value);
    }
  });
}

sampled('chain_head_block', 'Latest block the chain’s node reported to its follower', (f) => f.headBlock);
sampled('chain_applied_block', 'Highest block whose movements are recorded', (f) => f.appliedBlock);
sampled('chain_lag_blocks', 'Head block minus applied block', (f) => f.lagBlocks);
sampled('chain_lag_seconds', 'Block time of the head minus block time of the applied block', (f) => f.lagSeconds);
sampled('chain_node_up', '1 while the follower’s last step against the node succeeded, 0 after a failure', (f) =>
  f.lastError === null ? 1 : 0,
);

/** The figures come from whichever live sampler answers first (every process registers one). */
export function registerChainFiguresSampler(sampler: () => Promise<ChainFigures[]>): () => void {
  samplers.add(sampler);
  return () => samplers.delete(sampler);
}
