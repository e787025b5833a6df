import { RpcLog, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC, ZERO_ADDRESS } from './log-decoding';
import {
  addressTopic,
  logInPiece,
  LogPiece,
  mergeLogs,
  pieceTopics,
  piecesFor,
  splitPiece,
  unreadableLogsAction,
} from './log-pieces.rules';

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const ERC1155 = [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];

describe('unreadableLogsAction', () => {
  it('halves a range of several blocks the node cannot answer whole', () => {
    expect(unreadableLogsAction(2, true)).toBe('halve');
    expect(unreadableLogsAction(1000, true)).toBe('halve');
  });

  it('reads a single block by address instead of retrying it whole', () => {
    expect(unreadableLogsAction(1, true)).toBe('by-address');
  });

  it('treats any other failure as the node’s, whatever the span', () => {
    expect(unreadableLogsAction(1, false)).toBe('fail');
    expect(unreadableLogsAction(64, false)).toBe('fail');
  });
});

describe('piecesFor', () => {
  it('asks for every party position with the addresses in chunks', () => {
    const addresses = [1, 2, 3, 4, 5].map(address);
    const pieces = piecesFor(addresses, 2);
    expect(pieces).toHaveLength(4 * 3);
    expect(pieces.slice(0, 3).map((p) => p.addresses)).toEqual([addresses.slice(0, 2), addresses.slice(2, 4), addresses.slice(4)]);
    expect(pieces.map((p) => [p.topic0, p.position])).toEqual([
      ...Array(3).fill([[TRANSFER_TOPIC], 1]),
      ...Array(3).fill([[TRANSFER_TOPIC], 2]),
      ...Array(3).fill([ERC1155, 2]),
      ...Array(3).fill([ERC1155, 3]),
    ]);
  });

  it('never asks for the zero address (every mint and burn) nor twice for one address', () => {
    const pieces = piecesFor([ZERO_ADDRESS, address(7), address(7)], 500);
    expect(pieces.map((p) => p.addresses)).toEqual(Array(4).fill([address(7)]));
  });

  it('has nothing to ask when nobody is watched', () => {
    expect(piecesFor([], 500)).toEqual([]);
    expect(piecesFor([ZERO_ADDRESS], 500)).toEqual([]);
  });
});

describe('splitPiece', () => {
  it('halves the addresses first, covering each once', () => {
    const piece: LogPiece = { topic0: ERC1155, position: 3, addresses: [1, 2, 3].map(address) };
    expect(splitPiece(piece)).toEqual([
      { topic0: ERC1155, position: 3, addresses: [address(1), address(2)] },
      { topic0: ERC1155, position: 3, addresses: [address(3)] },
    ]);
  });

  it('then splits one address by event', () => {
    expect(splitPiece({ topic0: ERC1155, position: 2, addresses: [address(1)] })).toEqual([
      { topic0: [TRANSFER_SINGLE_TOPIC], position: 2, addresses: [address(1)] },
      { topic0: [TRANSFER_BATCH_TOPIC], position: 2, addresses: [address(1)] },
    ]);
  });

  it('cannot split one address and one event', () => {
    expect(splitPiece({ topic0: [TRANSFER_TOPIC], position: 1, addresses: [address(1)] })).toBeNull();
  });

  it('always ends: every split makes strictly smaller pieces', () => {
    let pieces: LogPiece[] = piecesFor([1, 2, 3, 4, 5, 6, 7].map(address), 7);
    let rounds = 0;
    while (pieces.length > 0) {
      pieces = pieces.flatMap((p) => splitPiece(p) ?? []);
      rounds++;
    }
    expect(rounds).toBeLessThanOrEqual(5);
  });
});

describe('pieceTopics and logInPiece', () => {
  const alice = '0x00000000000000000000000000000000000a11CE';
  const aliceTopic = `0x${'0'.repeat(24)}00000000000000000000000000000000000a11ce`;

  it('puts the addresses, as lowercase 32-byte words, at their position', () => {
    expect(addressTopic(alice)).toBe(aliceTopic);
    expect(pieceTopics({ topic0: [TRANSFER_TOPIC], position: 1, addresses: [alice] })).toEqual([[TRANSFER_TOPIC], [aliceTopic]]);
    expect(pieceTopics({ topic0: ERC1155, position: 3, addresses: [alice, address(2)] })).toEqual([
      ERC1155,
      null,
      null,
      [aliceTopic, addressTopic(address(2))],
    ]);
  });

  it('matches a log the way the node filters it', () => {
    const piece: LogPiece = { topic0: ERC1155, position: 3, addresses: [alice.toLowerCase()] };
    const other = addressTopic(address(9));
    expect(logInPiece({ topics: [TRANSFER_SINGLE_TOPIC, other, other, aliceTopic.toUpperCase().replace('0X', '0x')] }, piece)).toBe(true);
    expect(logInPiece({ topics: [TRANSFER_SINGLE_TOPIC, other, aliceTopic, other] }, piece)).toBe(false);
    expect(logInPiece({ topics: [TRANSFER_TOPIC, other, other, aliceTopic] }, piece)).toBe(false);
    // A bare topic, without parties, is no movement of anyone.
    expect(logInPiece({ topics: [TRANSFER_SINGLE_TOPIC] }, piece)).toBe(false);
  });
});

describe('mergeLogs', () => {
  const log = (block: number, index: number, hash = '0xb'): RpcLog => ({
    address: address(1),
    topics: [TRANSFER_TOPIC],
    data: '0x',
    blockNumber: `0x${block.toString(16)}`,
    blockHash: hash,
    transactionHash: '0xt',
    logIndex: `0x${index.toString(16)}`,
  });

  it('keeps each log once, in chain order', () => {
    const merged = mergeLogs([[log(5, 3), log(5, 1)], [log(5, 1), log(4, 9)], []]);
    expect(merged.map((l) => [Number(l.blockNumber), Number(l.logIndex)])).toEqual([
      [4, 9],
      [5, 1],
      [5, 3],
    ]);
  });
});
