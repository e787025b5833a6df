import { badRequest, DomainError, unprocessable } from '../../common/errors/domain-error';
import { normalizeAddress } from '../../common/evm-address';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { parseAsOf } from '../transactions/as-of.rules';
import { ZERO_ADDRESS } from '../chain/log-decoding';

/** How many contracts one organization may index. */
export const MAX_CONTRACTS_PER_ORGANIZATION = 20;

/** One transfer of an indexed contract (addresses lowercase, amounts decimal strings). */
export interface IndexedTransfer {
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
  /** Position of the id/value pair in a TransferBatch; null for Transfer and TransferSingle. */
  batchIndex: number | null;
  from: string;
  to: string;
  tokenId: string;
  amount: string;
}

/** What a holder has: token ids held (balance > 0) and the sum of those balances. */
export interface HolderTotals {
  tokenCount: number;
  amount: bigint;
}

/** A holder's totals as they stand after `blockNumber`. */
export interface HolderChange extends HolderTotals {
  blockNumber: number;
  holder: string;
}

export const pairKey = (holder: string, tokenId: string): string => `${holder}:${tokenId}`;

/** The (holder, token) pairs and the holders a set of transfers moves; the zero address is never one. */
export function touched(transfers: readonly IndexedTransfer[]): { pairs: { holder: string; tokenId: string }[]; holders: string[] } {
  const pairs = new Map<string, { holder: string; tokenId: string }>();
  for (const t of transfers) {
    for (const holder of [t.from, t.to]) {
      if (holder !== ZERO_ADDRESS) pairs.set(pairKey(holder, t.tokenId), { holder, tokenId: t.tokenId });
    }
  }
  const list = [...pairs.values()];
  return { pairs: list, holders: [...new Set(list.map((p) => p.holder))] };
}

/**
 * Applies transfers (in chain order) to the balances of the pairs they touch and the totals of
 * the holders they touch (both maps updated in place; a missing entry is zero), and returns each
 * touched holder's totals after every block that touched it. Sums start at the contract's
 * fromBlock, so a balance may go below zero (tokens held before it): a token counts as held, and
 * its balance in the holder's amount, only while its balance is above zero.
 */
export function applyTransfers(
  transfers: readonly IndexedTransfer[],
  balances: Map<string, bigint>,
  totals: Map<string, HolderTotals>,
): HolderChange[] {
  const changes: HolderChange[] = [];
  let block: number | null = null;
  let inBlock = new Set<string>();
  const flush = () => {
    for (const holder of inBlock) {
      const t = totals.get(holder)!;
      changes.push({ blockNumber: block!, holder, tokenCount: t.tokenCount, amount: t.amount });
    }
    inBlock = new Set();
  };
  const move = (holder: string, tokenId: string, delta: bigint) => {
    if (holder === ZERO_ADDRESS) return;
    const key = pairKey(holder, tokenId);
    const before = balances.get(key) ?? 0n;
    const after = before + delta;
    balances.set(key, after);
    const t = totals.get(holder) ?? { tokenCount: 0, amount: 0n };
    t.tokenCount += Number(after > 0n) - Number(before > 0n);
    t.amount += (after > 0n ? after : 0n) - (before > 0n ? before : 0n);
    totals.set(holder, t);
    inBlock.add(holder);
  };
  for (const transfer of transfers) {
    if (block !== null && transfer.blockNumber !== block) flush();
    block = transfer.blockNumber;
    const amount = BigInt(transfer.amount);
    move(transfer.from, transfer.tokenId, -amount);
    move(transfer.to, transfer.tokenId, amount);
  }
  if (block !== null) flush();
  return changes;
}

/**
 * Whether to write a full holder list at the block just indexed: once the changes since the last
 * one outnumber the holders it had (and a floor), a page at a later block reads at most about as
 * many changes as a checkpoint has rows, and the checkpoints together stay about the size of the
 * changes.
 */
export function checkpointDue(changesSince: number, lastCheckpointSize: number): boolean {
  return changesSince >= Math.max(CHECKPOINT_FLOOR, lastCheckpointSize);
}
export const CHECKPOINT_FLOOR = 2048;

/** Consecutive pieces of at least `size` transfers (the last may be smaller), never splitting a block. */
export function chunksByBlock(transfers: readonly IndexedTransfer[], size: number): IndexedTransfer[][] {
  const chunks: IndexedTransfer[][] = [];
  let current: IndexedTransfer[] = [];
  for (const t of transfers) {
    if (current.length >= size && current[current.length - 1].blockNumber !== t.blockNumber) {
      chunks.push(current);
      current = [];
    }
    current.push(t);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** Which block a holders or owners read is about, as asked. */
export type PointInTime = { kind: 'block'; block: number } | { kind: 'asOf'; asOf: string } | { kind: 'indexed' };

const BLOCK_NUMBER = /^(0|[1-9]\d{0,15})$/;

function blockParameter(value: string, field: string): number {
  const n = BLOCK_NUMBER.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw badRequest('VALIDATION_FAILED', `${field}: must be a block number (an integer ≥ 0)`, [
      { field, message: 'must be an integer ≥ 0' },
    ]);
  }
  return n;
}

/** `atBlock` or `asOf` (not both), each well-formed; neither means the indexed block. */
export function parsePointInTime(atBlock: string | undefined, asOf: string | undefined): PointInTime {
  if (atBlock !== undefined && asOf !== undefined) {
    throw badRequest('VALIDATION_FAILED', 'Give atBlock or asOf, not both.', [
      { field: 'asOf', message: 'must not be given with atBlock' },
    ]);
  }
  if (atBlock !== undefined) return { kind: 'block', block: blockParameter(atBlock, 'atBlock') };
  if (asOf !== undefined) {
    const parsed = parseAsOf(asOf);
    if (parsed === null) {
      throw badRequest('VALIDATION_FAILED', 'asOf: must be an ISO 8601 date-time with an offset, e.g. 2026-11-25T10:00:00+00:00', [
        { field: 'asOf', message: 'must be an ISO 8601 date-time with seconds and an offset (Z or ±hh:mm); encode + as %2B' },
      ]);
    }
    return { kind: 'asOf', asOf: parsed };
  }
  return { kind: 'indexed' };
}

/** The optional block bounds of the transfers read. */
export function parseBlockBound(value: string | undefined, field: string): number | undefined {
  return value === undefined ? undefined : blockParameter(value, field);
}

/** Why a block cannot be read (null when it can): before the contract's fromBlock, or past what is indexed. */
export function blockRefusal(block: number, range: { fromBlock: number; indexedBlock: number }): DomainError | null {
  if (block < range.fromBlock) {
    return unprocessable('BEFORE_INDEXED_RANGE', `Block ${block} is before block ${range.fromBlock}, where this contract's index starts.`);
  }
  if (block > range.indexedBlock) {
    return unprocessable(
      'NOT_YET_INDEXED',
      `Block ${block} is not indexed yet: the index has reached block ${range.indexedBlock}; ask again once it is past ${block}.`,
    );
  }
  return null;
}

/** Where a holders page ends: the walk's block and the last holder served. */
export interface HoldersPageKey {
  block: number;
  amount: string;
  holder: string;
}

const DECIMAL = /^(0|[1-9]\d{0,79})$/;
const invalidKey = () => badRequest('INVALID_PAGE_KEY', 'pageKey is not a key returned by this endpoint.');

export const encodeHoldersPageKey = (key: HoldersPageKey): string => encodePageKey([key.block, key.amount, key.holder]);

export function decodeHoldersPageKey(pageKey: string): HoldersPageKey {
  const [block, amount, holder] = decodePageKey(pageKey, ['number', 'string', 'string']) as [number, string, string];
  if (!Number.isSafeInteger(block) || block < 0 || !DECIMAL.test(amount) || normalizeAddress(holder) !== holder) throw invalidKey();
  return { block, amount, holder };
}

/** Where a transfers page ends: the last transfer's place in chain order (batchIndex -1 for none) and the walk's last block. */
export interface TransfersPageKey {
  blockNumber: number;
  logIndex: number;
  batchIndex: number;
  toBlock: number;
}

export const encodeTransfersPageKey = (key: TransfersPageKey): string =>
  encodePageKey([key.blockNumber, key.logIndex, key.batchIndex, key.toBlock]);

export function decodeTransfersPageKey(pageKey: string): TransfersPageKey {
  const values = decodePageKey(pageKey, ['number', 'number', 'number', 'number']) as number[];
  const [blockNumber, logIndex, batchIndex, toBlock] = values;
  if (!values.every(Number.isSafeInteger) || blockNumber < 0 || logIndex < 0 || batchIndex < -1 || toBlock < 0) throw invalidKey();
  return { blockNumber, logIndex, batchIndex, toBlock };
}

/**
 * The transactions of a range that may be a mass airdrop: those moving the contract's tokens to at
 * least `minimum` distinct recipients besides the zero address. The spam rule also leaves out the
 * transaction's sender, which only its receipt tells, so these are judged there.
 */
export function airdropCandidates(transfers: readonly Pick<IndexedTransfer, 'transactionHash' | 'to'>[], minimum: number): string[] {
  const recipients = new Map<string, Set<string>>();
  for (const t of transfers) {
    if (t.to.toLowerCase() === ZERO_ADDRESS) continue;
    const set = recipients.get(t.transactionHash) ?? new Set<string>();
    set.add(t.to.toLowerCase());
    recipients.set(t.transactionHash, set);
  }
  return [...recipients].filter(([, set]) => set.size >= minimum).map(([hash]) => hash);
}
