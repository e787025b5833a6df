/**
 * The rules of a chain's `newHeads` subscription: when to subscribe again after a loss, and when
 * a subscription that still looks open has stopped pushing. Pushed heads only wake the chain's
 * readers; the readers' own polls stay, so these rules decide latency, never what is recorded.
 */

/** Subscribing again: the first try this long after a loss, doubled for each failure in a row, capped, ±20% jitter. */
export const RESUBSCRIBE_BACKOFF = { baseMs: 1_000, maxMs: 30_000 };

/** The pause before subscribing again after `failuresInARow` losses or refusals (1 for the first). */
export function resubscribeDelayMs(failuresInARow: number, random: () => number = Math.random): number {
  const { baseMs, maxMs } = RESUBSCRIBE_BACKOFF;
  // 2^16 times the base is past the cap already.
  const ms = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(failuresInARow, 1) - 1, 16));
  // Jittered, so the followers of several chains behind one provider do not come back together.
  return Math.round(ms * (0.8 + random() * 0.4));
}

/**
 * The heads a live subscription pushed against those the chain's own polls read. `pushed` is the
 * highest head pushed (or, before the first push, the first head polled: the baseline); `behindSince`
 * when a poll first found a head above it, null while the pushes keep up.
 */
export interface PushWatch {
  pushed: number | null;
  behindSince: number | null;
}

/** A subscription just accepted: nothing pushed yet. */
export const NOTHING_PUSHED: PushWatch = { pushed: null, behindSince: null };

export function afterPush(watch: PushWatch, head: number): PushWatch {
  return { pushed: Math.max(watch.pushed ?? head, head), behindSince: null };
}

/** A poll read `head` at `nowMs`. */
export function afterPoll(watch: PushWatch, head: number, nowMs: number): PushWatch {
  if (watch.pushed === null) return { pushed: head, behindSince: null };
  if (head <= watch.pushed) return { pushed: watch.pushed, behindSince: null };
  return { pushed: watch.pushed, behindSince: watch.behindSince ?? nowMs };
}

/**
 * Whether the subscription has stopped pushing: for `staleMs` the polls have found heads above
 * every one it pushed, and it pushed none meanwhile. Some providers drop a subscription on their
 * side and keep the connection open; a chain with no new blocks is never taken for that.
 */
export function pushesStopped(watch: PushWatch, nowMs: number, staleMs: number): boolean {
  return watch.behindSince !== null && nowMs - watch.behindSince >= staleMs;
}
