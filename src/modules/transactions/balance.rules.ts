import { UINT256_MAX } from '../tokens/uint256';

/**
 * The most a balance row may hold: a token amount is a uint256 on chain, so no wallet can hold
 * more of one token than 2^256-1. The column (numeric(78,0)) could hold more; this cap is what
 * refuses it, in the plans (pure, below) and again in every statement that writes a row.
 */
export const BALANCE_CAP = UINT256_MAX;

/** Whether crediting `amount` to a row holding `held` keeps it at or under the cap. */
export function creditFits(held: bigint, amount: bigint): boolean {
  return held + amount <= BALANCE_CAP;
}

/** A balance row: what a wallet holds of a token. */
export interface BalanceRowKey {
  walletId: string;
  tokenId: string;
}

/**
 * The ledger's one lock order: ascending wallet id, then token id. Ids are lowercase UUIDs, so
 * comparing their text orders them as PostgreSQL orders the uuid values. Every writer locks and
 * changes rows in this order, so two transactions can never wait for each other in a cycle.
 */
export function compareInLockOrder(a: BalanceRowKey, b: BalanceRowKey): number {
  return compareIds(a.walletId, b.walletId) || compareIds(a.tokenId, b.tokenId);
}

/** `rows` in the lock order (a sorted copy). */
export function inLockOrder<T extends BalanceRowKey>(rows: readonly T[]): T[] {
  return [...rows].sort(compareInLockOrder);
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
