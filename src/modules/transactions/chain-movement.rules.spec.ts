import { UINT256_MAX } from '../tokens/uint256';
import {
  chainBalanceKey,
  ChainMovement,
  chainMovementType,
  chainTokenRef,
  movementKey,
  planChainMovements,
  revertChanges,
  ZERO_ADDRESS,
} from './chain-movement.rules';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const OUT = '0x' + 'e'.repeat(40);
const C = '0x' + 'c'.repeat(40);
let log = 0;
const move = (from: string, to: string, amount = '1', extra: Partial<ChainMovement> = {}): ChainMovement => ({
  chainId: 31337,
  blockNumber: 10,
  blockHash: '0x' + '1'.repeat(64),
  blockTimestamp: new Date('2026-11-25T10:00:00Z'),
  transactionHash: '0x' + '2'.repeat(64),
  logIndex: log++,
  batchIndex: null,
  contractAddress: C,
  blockchainTokenId: '7',
  amount,
  from,
  to,
  standard: 'erc1155',
  ...extra,
});
const org1 = new Map([
  [
    'o1',
    new Map([
      [A, 'wa'],
      [B, 'wb'],
    ]),
  ],
]);
const ref = chainTokenRef('o1', { chainId: 31337, contractAddress: C, blockchainTokenId: '7' });

describe('chain movement types', () => {
  it('names the five types from the sides the organization holds', () => {
    expect(chainMovementType({ from: ZERO_ADDRESS, to: A }, null, 'wa')).toBe('nftMint');
    expect(chainMovementType({ from: A, to: ZERO_ADDRESS }, 'wa', null)).toBe('nftBurn');
    expect(chainMovementType({ from: A, to: B }, 'wa', 'wb')).toBe('nftTransfer');
    expect(chainMovementType({ from: OUT, to: A }, null, 'wa')).toBe('nftDeposit');
    expect(chainMovementType({ from: A, to: OUT }, 'wa', null)).toBe('nftWithdrawal');
    expect(chainMovementType({ from: OUT, to: OUT }, null, null)).toBeNull();
    expect(chainMovementType({ from: A, to: A }, 'wa', 'wa')).toBeNull();
  });
});

describe('planning chain movements', () => {
  it('replays in chain order over the balances and nets the changes', () => {
    const plan = planChainMovements(
      [move(ZERO_ADDRESS, A, '5'), move(A, B, '3'), move(B, ZERO_ADDRESS, '1'), move(OUT, B, '2'), move(A, OUT, '2')],
      org1,
      new Set(),
      new Map(),
    );
    expect(plan.rows.map((r) => [r.type, r.fromWalletId, r.toWalletId])).toEqual([
      ['nftMint', null, 'wa'],
      ['nftTransfer', 'wa', 'wb'],
      ['nftBurn', 'wb', null],
      ['nftDeposit', null, 'wb'],
      ['nftWithdrawal', 'wa', null],
    ]);
    expect(plan.skipped).toBe(0);
    // wa: +5 -3 -2 = 0, no change left to write.
    expect(plan.changes).toEqual(new Map([[chainBalanceKey('wb', ref), 4n]]));
  });

  it('records a movement once: already recorded keys and repeats within the list are skipped', () => {
    const first = move(ZERO_ADDRESS, A);
    const plan = planChainMovements([first, { ...first }, move(ZERO_ADDRESS, A)], org1, new Set([movementKey('o1', first)]), new Map());
    expect(plan.rows).toHaveLength(1);
    expect(plan.rows[0].index).toBe(2);
    expect(plan.skipped).toBe(2);
  });

  it('keeps TransferBatch pairs apart by batchIndex', () => {
    const pair0 = move(ZERO_ADDRESS, A, '1', { logIndex: 99, batchIndex: 0 });
    const pair1 = { ...pair0, batchIndex: 1, blockchainTokenId: '8' };
    expect(planChainMovements([pair0, pair1], org1, new Set(), new Map()).rows).toHaveLength(2);
  });

  it('treats a debit the wallet cannot cover as coming from outside', () => {
    const plan = planChainMovements(
      [move(A, B, '2'), move(A, OUT), move(A, ZERO_ADDRESS)],
      org1,
      new Set(),
      new Map([[chainBalanceKey('wa', ref), 1n]]),
    );
    expect(plan.rows.map((r) => r.type)).toEqual(['nftDeposit', 'nftWithdrawal']);
    expect(plan.skipped).toBe(1);
    expect(plan.changes).toEqual(
      new Map([
        [chainBalanceKey('wa', ref), -1n],
        [chainBalanceKey('wb', ref), 2n],
      ]),
    );
  });

  it('lets every organization holding an address see the movement in its own data', () => {
    const two = new Map([
      ['o1', new Map([[A, 'wa']])],
      [
        'o2',
        new Map([
          [A, 'xa'],
          [B, 'xb'],
        ]),
      ],
    ]);
    const plan = planChainMovements([move(ZERO_ADDRESS, A), move(A, B)], two, new Set(), new Map());
    expect(plan.rows.map((r) => [r.organizationId, r.type])).toEqual([
      ['o1', 'nftMint'],
      ['o2', 'nftMint'],
      ['o1', 'nftWithdrawal'],
      ['o2', 'nftTransfer'],
    ]);
  });

  it('ignores movements of no watched address and self-transfers, and never passes 2^256-1', () => {
    const plan = planChainMovements(
      [move(OUT, OUT), move(A, A), move(ZERO_ADDRESS, A)],
      org1,
      new Set(),
      new Map([[chainBalanceKey('wa', ref), UINT256_MAX]]),
    );
    expect(plan.rows).toEqual([]);
    expect(plan.skipped).toBe(2);
  });
});

describe('reverting', () => {
  it('gives back what each wallet received and returns what it sent, net per balance, in lock order', () => {
    expect(
      revertChanges([
        { id: '3', fromWalletId: 'wb', toWalletId: null, tokenId: 't', amount: '1' },
        { id: '2', fromWalletId: 'wa', toWalletId: 'wb', tokenId: 't', amount: '3' },
        { id: '1', fromWalletId: null, toWalletId: 'wa', tokenId: 't', amount: '5' },
      ]),
    ).toEqual([
      { walletId: 'wa', tokenId: 't', delta: -2n },
      { walletId: 'wb', tokenId: 't', delta: -2n },
    ]);
  });
});
