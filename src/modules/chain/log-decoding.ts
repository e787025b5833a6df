import { decodeAbiParameters, Hex } from 'viem';
import type { ChainMovement } from '../transactions/chain-movements.service';

/** keccak256 of each event signature: the topic0 the follower asks the node for. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const TRANSFER_SINGLE_TOPIC = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
export const TRANSFER_BATCH_TOPIC = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';
export const NFT_EVENT_TOPICS = [TRANSFER_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC] as const;

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** A log as eth_getLogs answers it (quantities are hex strings). */
export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string | null;
  blockHash: string | null;
  transactionHash: string | null;
  logIndex: string | null;
  removed?: boolean;
  /** Sent by newer nodes (and anvil); saves a block header read when present. */
  blockTimestamp?: string;
}

/** One NFT movement read from a log, before its block time is known. */
export type DecodedMovement = Omit<ChainMovement, 'blockTimestamp'>;

const WORD = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_WORD = /^0x0{24}([0-9a-fA-F]{40})$/;

function topicAddress(topic: string | undefined): string | null {
  const match = topic === undefined ? null : ADDRESS_WORD.exec(topic);
  return match ? `0x${match[1].toLowerCase()}` : null;
}

function wordToDecimal(word: string): string {
  return BigInt(`0x${word}`).toString();
}

/**
 * The NFT movements in `logs`, in log order: ERC-721 `Transfer` (exactly four topics: ERC-20's
 * `Transfer` has the same topic0 but three topics, and is ignored), ERC-1155 `TransferSingle`, and
 * `TransferBatch` (one movement per id/value pair, `batchIndex` its position). A log that does not
 * decode (any contract can emit any bytes under these topics), a removed log, a zero amount and a
 * transfer to the sender itself move nothing and are left out.
 */
export function decodeTransferLogs(chainId: number, logs: readonly RpcLog[]): DecodedMovement[] {
  const movements: DecodedMovement[] = [];
  for (const log of logs) {
    if (log.removed || log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null) {
      continue;
    }
    const topic0 = log.topics[0]?.toLowerCase();
    const base = {
      chainId,
      blockNumber: Number(log.blockNumber),
      blockHash: log.blockHash.toLowerCase(),
      transactionHash: log.transactionHash.toLowerCase(),
      logIndex: Number(log.logIndex),
      contractAddress: log.address.toLowerCase(),
    };
    if (topic0 === TRANSFER_TOPIC) {
      if (log.topics.length !== 4 || !WORD.test(log.topics[3])) continue;
      const from = topicAddress(log.topics[1]);
      const to = topicAddress(log.topics[2]);
      if (from === null || to === null || from === to) continue;
      movements.push({
        ...base,
        batchIndex: null,
        blockchainTokenId: wordToDecimal(log.topics[3].slice(2)),
        amount: '1',
        from,
        to,
        standard: 'erc721',
      });
    } else if (topic0 === TRANSFER_SINGLE_TOPIC) {
      if (log.topics.length !== 4 || !/^0x[0-9a-fA-F]{128}$/.test(log.data)) continue;
      const from = topicAddress(log.topics[2]);
      const to = topicAddress(log.topics[3]);
      const amount = wordToDecimal(log.data.slice(66, 130));
      if (from === null || to === null || from === to || amount === '0') continue;
      movements.push({
        ...base,
        batchIndex: null,
        blockchainTokenId: wordToDecimal(log.data.slice(2, 66)),
        amount,
        from,
        to,
        standard: 'erc1155',
      });
    } else if (topic0 === TRANSFER_BATCH_TOPIC) {
      if (log.topics.length !== 4) continue;
      const from = topicAddress(log.topics[2]);
      const to = topicAddress(log.topics[3]);
      if (from === null || to === null || from === to) continue;
      const pairs = decodeBatch(log.data);
      if (pairs === null) continue;
      pairs.forEach(([id, value], batchIndex) => {
        if (value === 0n) return;
        movements.push({
          ...base,
          batchIndex,
          blockchainTokenId: id.toString(),
          amount: value.toString(),
          from,
          to,
          standard: 'erc1155',
        });
      });
    }
  }
  return movements;
}

function decodeBatch(data: string): [bigint, bigint][] | null {
  try {
    const [ids, values] = decodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], data as Hex);
    if (ids.length !== values.length) return null;
    return ids.map((id, i) => [id, values[i]]);
  } catch {
    return null;
  }
}

/**
 * Whether a movement touches one of the watched (lowercase) addresses. The zero address stands
 * for "no one" (mint, burn): a wallet registered at it would otherwise receive every burn.
 */
export function touchesWatched(movement: Pick<DecodedMovement, 'from' | 'to'>, watched: ReadonlySet<string>): boolean {
  return (movement.to !== ZERO_ADDRESS && watched.has(movement.to)) || (movement.from !== ZERO_ADDRESS && watched.has(movement.from));
}
