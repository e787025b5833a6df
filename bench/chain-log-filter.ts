/**
 * `npx ts-node --swc bench/chain-log-filter.ts`: what following 10,000 watched addresses costs per
 * range of blocks, two ways, against a local anvil (test/support/evm.ts):
 *
 *  - in memory (what the follower does): one eth_getLogs by topic0 (Transfer, TransferSingle,
 *    TransferBatch) over the range, every log decoded and matched against the watched set;
 *  - address topics: the watched addresses as topic filters, in chunks, four filters per chunk
 *    (ERC-721 from and to at topics 1 and 2, ERC-1155 from and to at topics 2 and 3); only
 *    matching logs come back, but the calls grow with the number of addresses.
 *
 * The chain is "busy" in the way that matters: most Transfer logs are not the watched addresses'
 * (unwatched NFT holders, and ERC-20 transfers sharing the Transfer topic).
 * Environment: BENCH_ADDRESSES (10000), BENCH_BLOCKS (50), BENCH_LOGS_PER_BLOCK (200),
 * BENCH_WATCHED_PER_BLOCK (20), BENCH_ERC20_PER_BLOCK (5), BENCH_ROUNDS (3).
 */
import { pad } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { createChainClient } from '../src/modules/chain/chain-clients';
import { ChainNode } from '../src/modules/chain/chain-node';
import {
  decodeTransferLogs,
  NFT_EVENT_TOPICS,
  RpcLog,
  touchesWatched,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
} from '../src/modules/chain/log-decoding';
import { ERC20_ABI, ERC721_ABI, LocalChain } from '../test/support/evm';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ADDRESSES = env('BENCH_ADDRESSES', 10_000);
const BLOCKS = env('BENCH_BLOCKS', 50);
const LOGS_PER_BLOCK = env('BENCH_LOGS_PER_BLOCK', 200);
const WATCHED_PER_BLOCK = env('BENCH_WATCHED_PER_BLOCK', 20);
const ERC20_PER_BLOCK = env('BENCH_ERC20_PER_BLOCK', 5);
const ROUNDS = env('BENCH_ROUNDS', 3);

const randomAddress = () => privateKeyToAddress(generatePrivateKey()).toLowerCase() as `0x${string}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Counts calls and answer bytes between the node and the follower's client. */
function countingFetch() {
  const stats = { calls: 0, bytes: 0 };
  const original = globalThis.fetch;
  globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
    const res = await original(...args);
    const body = await res.clone().arrayBuffer();
    stats.calls += 1;
    stats.bytes += body.byteLength;
    return res;
  };
  return { stats, restore: () => (globalThis.fetch = original) };
}

async function inMemory(node: ChainNode, chainId: number, from: number, to: number, watched: Set<string>) {
  const logs = await node.logs(from, to, [[...NFT_EVENT_TOPICS]]);
  const matched = decodeTransferLogs(chainId, logs).filter((m) => touchesWatched(m, watched));
  return { logs: logs.length, matched: matched.length };
}

async function byAddressTopics(node: ChainNode, chainId: number, from: number, to: number, watched: string[], chunk: number) {
  const erc1155 = [TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];
  const byKey = new Map<string, RpcLog>();
  for (let i = 0; i < watched.length; i += chunk) {
    const topics = watched.slice(i, i + chunk).map((a) => pad(a as `0x${string}`, { size: 32 }));
    const answers = await Promise.all([
      node.logs(from, to, [TRANSFER_TOPIC, topics]),
      node.logs(from, to, [TRANSFER_TOPIC, null, topics]),
      node.logs(from, to, [erc1155, null, topics]),
      node.logs(from, to, [erc1155, null, null, topics]),
    ]);
    for (const log of answers.flat()) byKey.set(`${log.blockHash}:${log.logIndex}`, log);
  }
  const logs = [...byKey.values()];
  return { logs: logs.length, matched: decodeTransferLogs(chainId, logs).length };
}

async function main(): Promise<void> {
  const chain = await LocalChain.start({ chainId: 31490 });
  try {
    const watched = Array.from({ length: ADDRESSES }, randomAddress);
    const watchedSet = new Set(watched);
    const nft = await chain.deployErc721();
    const coin = await chain.deployErc20();
    const started = Date.now();
    await chain.setAutomine(false);
    const from = (await chain.blockNumber()) + 1;
    let nextId = 1n;
    for (let b = 0; b < BLOCKS; b++) {
      const to = [
        ...Array.from({ length: WATCHED_PER_BLOCK }, (_, k) => watched[(b * WATCHED_PER_BLOCK + k) % watched.length]),
        ...Array.from({ length: LOGS_PER_BLOCK - WATCHED_PER_BLOCK }, randomAddress),
      ];
      await chain.send(nft, ERC721_ABI, 'mintMany', [to, nextId]);
      nextId += BigInt(to.length);
      for (let k = 0; k < ERC20_PER_BLOCK; k++) await chain.send(coin, ERC20_ABI, 'mint', [watched[k], 1000n]);
      await chain.mine(1);
    }
    await chain.setAutomine(true);
    const to = await chain.blockNumber();
    process.stdout.write(
      `chain: blocks ${from}..${to}, ${LOGS_PER_BLOCK} NFT + ${ERC20_PER_BLOCK} ERC-20 Transfer logs per block, ` +
        `${WATCHED_PER_BLOCK} of them to watched addresses; ${ADDRESSES} watched (built in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    );

    const node = new ChainNode(createChainClient({ chainId: chain.chainId, url: chain.rpcUrl }, 120_000));
    const results: string[] = [];
    const measure = async (label: string, work: () => Promise<{ logs: number; matched: number }>) => {
      const times: number[] = [];
      let last = { logs: 0, matched: 0 };
      const { stats, restore } = countingFetch();
      try {
        for (let r = 0; r < ROUNDS; r++) {
          const t0 = performance.now();
          last = await work();
          times.push(performance.now() - t0);
        }
      } catch (error) {
        const reason = (error as { shortMessage?: string }).shortMessage ?? String(error).split('\n')[0];
        const line = `${label.padEnd(36)} refused by the node: ${reason.slice(0, 120)}`;
        results.push(line);
        process.stdout.write(`${line}\n`);
        return;
      } finally {
        restore();
      }
      const line =
        `${label.padEnd(36)} ${median(times).toFixed(0).padStart(7)} ms/range  ${String(stats.calls / ROUNDS).padStart(5)} HTTP calls  ` +
        `${(stats.bytes / ROUNDS / 1024).toFixed(0).padStart(7)} KiB  ${String(last.logs).padStart(6)} logs read  ${last.matched} matched`;
      results.push(line);
      process.stdout.write(`${line}\n`);
    };
    await measure('in memory (one eth_getLogs by topic0)', () => inMemory(node, chain.chainId, from, to, watchedSet));
    for (const chunk of [100, 1000, 10_000]) {
      if (chunk > ADDRESSES) continue;
      await measure(`address topics, ${chunk} per filter`, () => byAddressTopics(node, chain.chainId, from, to, watched, chunk));
    }
  } finally {
    await chain.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
