import { RpcLog, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC, ZERO_ADDRESS } from './log-decoding';

/**
 * What to do when eth_getLogs over [from, to] could not be read whole: a wider range is halved (as
 * hosted nodes ask); a single block cannot be split by range, so it is read by watched address
 * instead (anyone can fill one block with logs under the NFT topics, and retrying it whole would
 * stop the chain's following for everyone); an error that says nothing about the size of the
 * answer is a node failure, retried with backoff.
 */
export type UnreadableLogsAction = 'halve' | 'by-address' | 'fail';

export function unreadableLogsAction(span: number, tooLarge: boolean): UnreadableLogsAction {
  if (!tooLarge) return 'fail';
  return span > 1 ? 'halve' : 'by-address';
}

/** Topic position of a party (1-based after topic0), and the event topics that put it there. */
export interface PartyPosition {
  topic0: readonly string[];
  position: 1 | 2 | 3;
}

/**
 * Where each NFT event carries its parties: ERC-721 `Transfer(from, to, id)` at topics 1 and 2,
 * ERC-1155 `TransferSingle`/`TransferBatch(operator, from, to, ...)` at topics 2 and 3. Every
 * movement of a watched address matches one of these filters with the address at that position.
 */
export const PARTY_POSITIONS: readonly PartyPosition[] = [
  { topic0: [TRANSFER_TOPIC], position: 1 },
  { topic0: [TRANSFER_TOPIC], position: 2 },
  { topic0: [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC], position: 2 },
  { topic0: [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC], position: 3 },
];

/** One eth_getLogs of a block by address: these events with one of `addresses` at `position`. */
export interface LogPiece extends PartyPosition {
  addresses: readonly string[];
}

/**
 * The pieces that read every movement of `addresses` (lowercase) in a block: each party position
 * with the addresses in chunks of at most `chunkSize` (an OR-list at that position). The zero
 * address is never asked for: it stands for mints and burns, and matching it would read every
 * mint of the block, watched or not.
 */
export function piecesFor(addresses: readonly string[], chunkSize: number): LogPiece[] {
  const size = Math.max(1, Math.floor(chunkSize));
  const watched = [...new Set(addresses)].filter((a) => a !== ZERO_ADDRESS);
  const pieces: LogPiece[] = [];
  for (const party of PARTY_POSITIONS) {
    for (let i = 0; i < watched.length; i += size) pieces.push({ ...party, addresses: watched.slice(i, i + size) });
  }
  return pieces;
}

/**
 * Smaller pieces covering the same logs as a refused one: its addresses halved, then (one address
 * left) one piece per event topic. Null when the piece is one address and one event: no log filter
 * can split it further.
 */
export function splitPiece(piece: LogPiece): LogPiece[] | null {
  if (piece.addresses.length > 1) {
    const half = Math.ceil(piece.addresses.length / 2);
    return [
      { ...piece, addresses: piece.addresses.slice(0, half) },
      { ...piece, addresses: piece.addresses.slice(half) },
    ];
  }
  if (piece.topic0.length > 1) return piece.topic0.map((topic) => ({ ...piece, topic0: [topic] }));
  return null;
}

/** An address as a 32-byte topic word, lowercase. */
export function addressTopic(address: string): string {
  return `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;
}

/** The eth_getLogs `topics` of a piece: its events, nothing in between, its addresses at their position. */
export function pieceTopics(piece: LogPiece): (string | string[] | null)[] {
  const topics: (string | string[] | null)[] = [[...piece.topic0]];
  for (let p = 1; p < piece.position; p++) topics.push(null);
  topics.push(piece.addresses.map(addressTopic));
  return topics;
}

/** Whether a log (read some other way, e.g. from a transaction receipt) is one the piece asks for. */
export function logInPiece(log: Pick<RpcLog, 'topics'>, piece: LogPiece): boolean {
  const topic0 = log.topics[0]?.toLowerCase();
  const party = log.topics[piece.position]?.toLowerCase();
  if (topic0 === undefined || party === undefined || !piece.topic0.includes(topic0)) return false;
  return piece.addresses.some((a) => addressTopic(a) === party);
}

/**
 * The logs of several pieces as one list in chain order, each log once: a transfer between two
 * watched addresses answers two pieces.
 */
export function mergeLogs(lists: readonly (readonly RpcLog[])[]): RpcLog[] {
  const byKey = new Map<string, RpcLog>();
  for (const log of lists.flat()) byKey.set(`${log.blockHash?.toLowerCase()}:${Number(log.logIndex)}`, log);
  return [...byKey.values()].sort((a, b) => Number(a.blockNumber) - Number(b.blockNumber) || Number(a.logIndex) - Number(b.logIndex));
}
