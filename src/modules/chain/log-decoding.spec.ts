import { encodeAbiParameters, pad, toHex } from 'viem';
import {
  decodeTransferLogs,
  RpcLog,
  touchesWatched,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
  ZERO_ADDRESS,
} from './log-decoding';

const NFT = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const ALICE = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const BOB = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const OPERATOR = '0x90f79bf6eb2c4f870365e785982e1f101e93b906';
const BLOCK_HASH = `0x${'ab'.repeat(32)}`;
const TX_HASH = `0x${'cd'.repeat(32)}`;

const word = (value: bigint) => pad(toHex(value), { size: 32 });
const addressTopic = (address: string) => pad(address as `0x${string}`, { size: 32 });

function log(topics: string[], data = '0x', overrides: Partial<RpcLog> = {}): RpcLog {
  return {
    address: NFT.toUpperCase().replace('0X', '0x'),
    topics,
    data,
    blockNumber: '0x10',
    blockHash: BLOCK_HASH,
    transactionHash: TX_HASH,
    logIndex: '0x2',
    ...overrides,
  };
}

describe('decodeTransferLogs', () => {
  it('reads an ERC-721 Transfer (four topics) with its chain coordinates, lowercase', () => {
    const id = 2n ** 255n + 7n;
    expect(decodeTransferLogs(31337, [log([TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(BOB), word(id)])])).toEqual([
      {
        chainId: 31337,
        blockNumber: 16,
        blockHash: BLOCK_HASH,
        transactionHash: TX_HASH,
        logIndex: 2,
        batchIndex: null,
        contractAddress: NFT,
        blockchainTokenId: id.toString(),
        amount: '1',
        from: ALICE,
        to: BOB,
        standard: 'erc721',
      },
    ]);
  });

  it('reads mints and burns as movements from and to the zero address', () => {
    const [mint, burn] = decodeTransferLogs(1, [
      log([TRANSFER_TOPIC, addressTopic(ZERO_ADDRESS), addressTopic(ALICE), word(1n)]),
      log([TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(ZERO_ADDRESS), word(1n)], '0x', { logIndex: '0x3' }),
    ]);
    expect([mint.from, mint.to, burn.from, burn.to]).toEqual([ZERO_ADDRESS, ALICE, ALICE, ZERO_ADDRESS]);
  });

  it('ignores an ERC-20 Transfer: same topic0, three topics, the amount in data', () => {
    expect(decodeTransferLogs(1, [log([TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(BOB)], word(1000n))])).toEqual([]);
  });

  it('reads an ERC-1155 TransferSingle: id and amount from data, no batch index', () => {
    const data = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [42n, 5n]);
    const [movement] = decodeTransferLogs(1, [
      log([TRANSFER_SINGLE_TOPIC, addressTopic(OPERATOR), addressTopic(ALICE), addressTopic(BOB)], data),
    ]);
    expect(movement).toMatchObject({ blockchainTokenId: '42', amount: '5', from: ALICE, to: BOB, batchIndex: null, standard: 'erc1155' });
  });

  it('reads every id/value pair of a TransferBatch as its own movement, batchIndex its position', () => {
    const data = encodeAbiParameters(
      [{ type: 'uint256[]' }, { type: 'uint256[]' }],
      [
        [7n, 8n, 9n],
        [1n, 20n, 300n],
      ],
    );
    const movements = decodeTransferLogs(1, [
      log([TRANSFER_BATCH_TOPIC, addressTopic(OPERATOR), addressTopic(ZERO_ADDRESS), addressTopic(BOB)], data),
    ]);
    expect(movements.map((m) => [m.batchIndex, m.blockchainTokenId, m.amount, m.from, m.to, m.logIndex])).toEqual([
      [0, '7', '1', ZERO_ADDRESS, BOB, 2],
      [1, '8', '20', ZERO_ADDRESS, BOB, 2],
      [2, '9', '300', ZERO_ADDRESS, BOB, 2],
    ]);
  });

  it('keeps the batch position of the pairs after a zero amount it leaves out', () => {
    const data = encodeAbiParameters(
      [{ type: 'uint256[]' }, { type: 'uint256[]' }],
      [
        [7n, 8n],
        [0n, 4n],
      ],
    );
    const movements = decodeTransferLogs(1, [
      log([TRANSFER_BATCH_TOPIC, addressTopic(OPERATOR), addressTopic(ALICE), addressTopic(BOB)], data),
    ]);
    expect(movements.map((m) => [m.batchIndex, m.blockchainTokenId, m.amount])).toEqual([[1, '8', '4']]);
  });

  it.each([
    ['a Transfer with five topics', log([TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(BOB), word(1n), word(2n)])],
    ['a topic that is not an address', log([TRANSFER_TOPIC, word(2n ** 200n), addressTopic(BOB), word(1n)])],
    [
      'a TransferSingle with short data',
      log([TRANSFER_SINGLE_TOPIC, addressTopic(OPERATOR), addressTopic(ALICE), addressTopic(BOB)], word(1n)),
    ],
    [
      'a TransferBatch with arrays of different lengths',
      log(
        [TRANSFER_BATCH_TOPIC, addressTopic(OPERATOR), addressTopic(ALICE), addressTopic(BOB)],
        encodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], [[1n, 2n], [1n]]),
      ),
    ],
    [
      'a TransferBatch with garbage data',
      log([TRANSFER_BATCH_TOPIC, addressTopic(OPERATOR), addressTopic(ALICE), addressTopic(BOB)], '0x1234'),
    ],
    ['a removed log', log([TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(BOB), word(1n)], '0x', { removed: true })],
    ['a transfer to the sender itself', log([TRANSFER_TOPIC, addressTopic(ALICE), addressTopic(ALICE), word(1n)])],
    ['another event', log([word(99n), addressTopic(ALICE), addressTopic(BOB), word(1n)])],
  ])('leaves out %s', (_name, input) => {
    expect(decodeTransferLogs(1, [input])).toEqual([]);
  });
});

describe('touchesWatched', () => {
  const watched = new Set([ALICE, ZERO_ADDRESS]);
  it('matches either side, never through the zero address', () => {
    expect(touchesWatched({ from: ALICE, to: BOB }, watched)).toBe(true);
    expect(touchesWatched({ from: BOB, to: ALICE }, watched)).toBe(true);
    expect(touchesWatched({ from: ZERO_ADDRESS, to: BOB }, watched)).toBe(false);
    expect(touchesWatched({ from: BOB, to: OPERATOR }, watched)).toBe(false);
  });
});
