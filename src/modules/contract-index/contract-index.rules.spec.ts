import { DomainError } from '../../common/errors/domain-error';
import {
  airdropCandidates,
  applyTransfers,
  blockRefusal,
  checkpointDue,
  chunksByBlock,
  decodeHoldersPageKey,
  decodeTransfersPageKey,
  encodeHoldersPageKey,
  encodeTransfersPageKey,
  HolderTotals,
  IndexedTransfer,
  pairKey,
  parsePointInTime,
  touched,
} from './contract-index.rules';

const ZERO = '0x0000000000000000000000000000000000000000';
const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';

let logIndex = 0;
const transfer = (blockNumber: number, from: string, to: string, tokenId: string, amount = '1'): IndexedTransfer => ({
  blockNumber,
  blockHash: `0x${blockNumber}`,
  transactionHash: '0xt',
  logIndex: logIndex++,
  batchIndex: null,
  from,
  to,
  tokenId,
  amount,
});

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return (error as DomainError).code;
  }
  return undefined;
};

describe('applyTransfers', () => {
  it('gives each touched holder its totals after every block that touched it, never the zero address', () => {
    const balances = new Map<string, bigint>();
    const totals = new Map<string, HolderTotals>();
    const changes = applyTransfers(
      [transfer(5, ZERO, A, '1'), transfer(5, ZERO, A, '2'), transfer(6, A, B, '1'), transfer(7, B, ZERO, '1')],
      balances,
      totals,
    );
    expect(changes).toEqual([
      { blockNumber: 5, holder: A, tokenCount: 2, amount: 2n },
      { blockNumber: 6, holder: A, tokenCount: 1, amount: 1n },
      { blockNumber: 6, holder: B, tokenCount: 1, amount: 1n },
      { blockNumber: 7, holder: B, tokenCount: 0, amount: 0n },
    ]);
    expect(balances.get(pairKey(A, '1'))).toBe(0n);
    expect(balances.has(pairKey(ZERO, '1'))).toBe(false);
  });

  it('counts a token and its balance only while the balance is above zero (sums start at fromBlock)', () => {
    const balances = new Map([[pairKey(A, '9'), 0n]]);
    const totals = new Map<string, HolderTotals>([[A, { tokenCount: 1, amount: 5n }]]);
    // A sends a token it received before fromBlock: its balance of it goes below zero.
    const changes = applyTransfers([transfer(3, A, B, '9', '2')], balances, totals);
    expect(changes).toEqual([
      { blockNumber: 3, holder: A, tokenCount: 1, amount: 5n },
      { blockNumber: 3, holder: B, tokenCount: 1, amount: 2n },
    ]);
    expect(balances.get(pairKey(A, '9'))).toBe(-2n);
    applyTransfers([transfer(4, B, A, '9', '3')], balances, totals);
    expect(totals.get(A)).toEqual({ tokenCount: 2, amount: 6n });
    expect(totals.get(B)).toEqual({ tokenCount: 0, amount: 0n });
  });

  it('lists the pairs and holders a set of transfers touches', () => {
    expect(touched([transfer(1, ZERO, A, '1'), transfer(1, A, B, '1')])).toEqual({
      pairs: [
        { holder: A, tokenId: '1' },
        { holder: B, tokenId: '1' },
      ],
      holders: [A, B],
    });
  });
});

describe('chunksByBlock and checkpoints', () => {
  it('cuts transfers into pieces of at least the size that never split a block', () => {
    const list = [
      transfer(1, ZERO, A, '1'),
      transfer(1, ZERO, A, '2'),
      transfer(1, ZERO, A, '3'),
      transfer(2, ZERO, A, '4'),
      transfer(3, ZERO, A, '5'),
    ];
    expect(chunksByBlock(list, 2).map((c) => c.map((t) => t.blockNumber))).toEqual([
      [1, 1, 1],
      [2, 3],
    ]);
    expect(chunksByBlock([], 2)).toEqual([]);
  });

  it('takes a checkpoint once the changes since the last one reach its size (and a floor)', () => {
    expect(checkpointDue(2047, 0)).toBe(false);
    expect(checkpointDue(2048, 0)).toBe(true);
    expect(checkpointDue(9999, 10_000)).toBe(false);
    expect(checkpointDue(10_000, 10_000)).toBe(true);
  });
});

describe('point in time and block refusals', () => {
  it('reads atBlock or asOf, never both, each well-formed', () => {
    expect(parsePointInTime(undefined, undefined)).toEqual({ kind: 'indexed' });
    expect(parsePointInTime('12', undefined)).toEqual({ kind: 'block', block: 12 });
    expect(parsePointInTime(undefined, '2026-11-25T10:00:00+02:00')).toEqual({ kind: 'asOf', asOf: '2026-11-25T10:00:00.000000+02:00' });
    for (const [atBlock, asOf] of [
      ['1', '2026-11-25T10:00:00Z'],
      ['-1', undefined],
      ['01', undefined],
      ['1e3', undefined],
      ['99999999999999999', undefined],
      [undefined, '2026-11-25T10:00:00'],
    ]) {
      expect(codeOf(() => parsePointInTime(atBlock, asOf))).toBe('VALIDATION_FAILED');
    }
  });

  it('refuses blocks before fromBlock and past indexedBlock', () => {
    const range = { fromBlock: 10, indexedBlock: 20 };
    expect(blockRefusal(9, range)?.code).toBe('BEFORE_INDEXED_RANGE');
    expect(blockRefusal(21, range)?.code).toBe('NOT_YET_INDEXED');
    expect(blockRefusal(10, range)).toBeNull();
    expect(blockRefusal(20, range)).toBeNull();
    // Nothing indexed yet: fromBlock itself is not readable.
    expect(blockRefusal(10, { fromBlock: 10, indexedBlock: 9 })?.code).toBe('NOT_YET_INDEXED');
  });
});

describe('page keys', () => {
  it('round-trip and refuse forged content', () => {
    const holders = { block: 7, amount: '12', holder: A };
    expect(decodeHoldersPageKey(encodeHoldersPageKey(holders))).toEqual(holders);
    const transfers = { blockNumber: 3, logIndex: 1, batchIndex: -1, toBlock: 9 };
    expect(decodeTransfersPageKey(encodeTransfersPageKey(transfers))).toEqual(transfers);
    const forge = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
    expect(codeOf(() => decodeHoldersPageKey(forge([7, '-1', A])))).toBe('INVALID_PAGE_KEY');
    expect(codeOf(() => decodeHoldersPageKey(forge([7, '1', A.toUpperCase()])))).toBe('INVALID_PAGE_KEY');
    expect(codeOf(() => decodeHoldersPageKey(forge([1.5, '1', A])))).toBe('INVALID_PAGE_KEY');
    expect(codeOf(() => decodeTransfersPageKey(forge([1, 1, -2, 1])))).toBe('INVALID_PAGE_KEY');
  });
});

describe('airdropCandidates', () => {
  const to = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
  it('keeps the transactions moving tokens to at least the minimum of distinct recipients, the zero address not counted', () => {
    const wide = Array.from({ length: 3 }, (_, i) => ({ transactionHash: '0xa', to: to(i + 1) }));
    const repeated = [1, 1, 2].map((n) => ({ transactionHash: '0xb', to: to(n) }));
    const withZero = [0, 1, 2].map((n) => ({ transactionHash: '0xc', to: to(n) }));
    expect(airdropCandidates([...wide, ...repeated, ...withZero], 3)).toEqual(['0xa']);
  });
});
