/** The longest history one wallet sync replays, in blocks. */
export const MAX_SYNC_BLOCKS = 1_000_000;

/**
 * Open (pending or running) syncs one organization may have at once, over all its wallets and
 * chains: each replays up to MAX_SYNC_BLOCKS blocks on the chain's follower, so the cap bounds
 * what one organization can queue there.
 */
export const MAX_OPEN_SYNCS_PER_ORGANIZATION = 5;

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

/** What a sync request is checked against: one open sync of the organization. */
export interface OpenSyncKey {
  id: string;
  walletId: string;
  chainId: number;
  fromBlock: number;
}

export type SyncRequestOutcome<T extends OpenSyncKey> =
  /** The same request is open: answer it (asking again is idempotent). */
  | { kind: 'existing'; sync: T }
  /** The wallet has an open sync on the chain from another block: one at a time per wallet and chain. */
  | { kind: 'inProgress'; sync: T }
  /** The organization has MAX_OPEN_SYNCS_PER_ORGANIZATION open syncs already. */
  | { kind: 'limitReached' }
  | { kind: 'create' };

/**
 * What a request for a sync of (walletId, chainId) from `fromBlock` comes to, given every open
 * sync of the organization. The wallet's own open sync is looked at first, so repeating a request
 * answers it even when the organization is at its limit.
 */
export function syncRequestOutcome<T extends OpenSyncKey>(
  openOfOrganization: readonly T[],
  request: { walletId: string; chainId: number; fromBlock: number },
): SyncRequestOutcome<T> {
  const open = openOfOrganization.find((s) => s.walletId === request.walletId && s.chainId === request.chainId);
  if (open) return open.fromBlock === request.fromBlock ? { kind: 'existing', sync: open } : { kind: 'inProgress', sync: open };
  if (openOfOrganization.length >= MAX_OPEN_SYNCS_PER_ORGANIZATION) return { kind: 'limitReached' };
  return { kind: 'create' };
}

/**
 * The sync a chain serves next, one range at a time: organizations take turns in id order (the
 * one after `lastServed`, wrapping around), so one organization's long syncs never keep another's
 * waiting for more than a range per organization. `heads` holds each organization's next sync
 * (its oldest open one), one per organization.
 */
export function nextInTurn<T extends { organizationId: string }>(heads: readonly T[], lastServed: string | null): T | null {
  if (heads.length === 0) return null;
  const sorted = [...heads].sort((a, b) => (a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : 0));
  if (lastServed === null) return sorted[0];
  return sorted.find((s) => s.organizationId > lastServed) ?? sorted[0];
}
