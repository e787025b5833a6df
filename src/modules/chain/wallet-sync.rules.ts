/** The longest history one wallet sync replays, in blocks. */
export const MAX_SYNC_BLOCKS = 1_000_000;

/**
 * Why a sync from `fromBlock` is refused while the follower stands at `appliedBlock` (null when
 * it has not started: the span is then checked when the replay begins), or null when it is not.
 */
export function syncRangeRefusal(appliedBlock: number | null, fromBlock: number): string | null {
  if (appliedBlock === null || appliedBlock - fromBlock + 1 <= MAX_SYNC_BLOCKS) return null;
  return (
    `A sync replays at most ${MAX_SYNC_BLOCKS.toLocaleString('en')} blocks; the chain is applied up to block ${appliedBlock}, ` +
    `so fromBlock must be at least ${appliedBlock - MAX_SYNC_BLOCKS + 1}.`
  );
}

/**
 * The last block a replay reads: what the follower had applied when it began (the follower
 * records everything after), and never more than MAX_SYNC_BLOCKS blocks.
 */
export function syncEndBlock(appliedBlock: number, fromBlock: number): number {
  return Math.min(appliedBlock, fromBlock + MAX_SYNC_BLOCKS - 1);
}
