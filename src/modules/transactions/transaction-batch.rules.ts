import { createHash } from 'node:crypto';
import { creditFits } from './balance.rules';
import { ApiTransactionType, chainManagedMessage, MovementRequest, requestFingerprint } from './transaction.rules';

/** The most movements one batch request may carry (docs/API.md "Batches of movements"). */
export const MAX_BATCH_SIZE = 1000;

export interface BatchMovement extends MovementRequest {
  type: ApiTransactionType;
}

/** Why the movement at `index` cannot apply; the whole batch answers with this alone. */
export interface BatchRefusal {
  index: number;
  status: 404 | 422;
  code: 'TOKEN_NOT_FOUND' | 'CHAIN_MANAGED' | 'WALLET_NOT_FOUND' | 'INSUFFICIENT_BALANCE' | 'BALANCE_OVERFLOW';
  field: 'tokenId' | 'fromWalletId' | 'toWalletId' | 'amount';
  message: string;
}

/** A (wallet, token) balance row, keyed as `walletId/tokenId`. */
export const balanceKey = (walletId: string, tokenId: string) => `${walletId}/${tokenId}`;

export interface BatchPlan {
  /** Net change of every balance row the batch touches, in (wallet id, token id) order. */
  changes: { walletId: string; tokenId: string; delta: bigint }[];
}

/**
 * Applies the movements in request order to an in-memory copy of the balances they touch, so each
 * movement sees what the earlier ones left, exactly as if they had been sent one by one. The first
 * movement that one-by-one sending would have refused refuses the batch. `balances` holds the
 * current (locked) rows; a missing key is zero. A token in `chainManaged` (followed on chain) is
 * refused like an unknown one: the chain is its only writer.
 */
export function planBatch(
  movements: BatchMovement[],
  knownTokens: { has(tokenId: string): boolean },
  knownWallets: ReadonlySet<string>,
  balances: ReadonlyMap<string, bigint>,
  chainManaged: ReadonlySet<string> = new Set(),
): BatchPlan | { refusal: BatchRefusal } {
  const current = new Map(balances);
  const start = new Map<string, { walletId: string; tokenId: string; before: bigint }>();
  const touch = (walletId: string, tokenId: string) => {
    const key = balanceKey(walletId, tokenId);
    if (!start.has(key)) start.set(key, { walletId, tokenId, before: balances.get(key) ?? 0n });
    return key;
  };

  for (const [index, m] of movements.entries()) {
    if (!knownTokens.has(m.tokenId)) {
      return { refusal: { index, status: 404, code: 'TOKEN_NOT_FOUND', field: 'tokenId', message: `Token ${m.tokenId} does not exist.` } };
    }
    if (chainManaged.has(m.tokenId)) {
      return { refusal: { index, status: 422, code: 'CHAIN_MANAGED', field: 'tokenId', message: chainManagedMessage(m.tokenId) } };
    }
    for (const field of ['fromWalletId', 'toWalletId'] as const) {
      const walletId = m[field];
      if (walletId !== null && !knownWallets.has(walletId)) {
        return { refusal: { index, status: 404, code: 'WALLET_NOT_FOUND', field, message: `Wallet ${walletId} does not exist.` } };
      }
    }
    const amount = BigInt(m.amount);
    if (m.fromWalletId !== null) {
      const key = touch(m.fromWalletId, m.tokenId);
      const held = current.get(key) ?? 0n;
      if (held < amount) {
        return {
          refusal: {
            index,
            status: 422,
            code: 'INSUFFICIENT_BALANCE',
            field: 'amount',
            message: `Wallet ${m.fromWalletId} holds less than ${m.amount} of token ${m.tokenId}.`,
          },
        };
      }
      current.set(key, held - amount);
    }
    if (m.toWalletId !== null) {
      const key = touch(m.toWalletId, m.tokenId);
      const held = current.get(key) ?? 0n;
      if (!creditFits(held, amount)) {
        return {
          refusal: {
            index,
            status: 422,
            code: 'BALANCE_OVERFLOW',
            field: 'amount',
            message: `Wallet ${m.toWalletId} would hold more than 2^256-1 of token ${m.tokenId}.`,
          },
        };
      }
      current.set(key, held + amount);
    }
  }

  const changes = [...start.entries()]
    .map(([key, row]) => ({ walletId: row.walletId, tokenId: row.tokenId, delta: current.get(key)! - row.before }))
    .filter((change) => change.delta !== 0n)
    .sort((a, b) => compareIds(a.walletId, b.walletId) || compareIds(a.tokenId, b.tokenId));
  return { changes };
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Identifies a batch by meaning: the same movements in the same order, however spelled. */
export function batchFingerprint(movements: MovementRequest[]): string {
  const hash = createHash('sha256');
  for (const movement of movements) hash.update(requestFingerprint(movement)).update('\n');
  return hash.digest('hex');
}
