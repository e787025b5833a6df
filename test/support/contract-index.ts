import { Address, getAddress, parseAbi } from 'viem';
import { bearer, TestOrganization } from './factories';
import { LocalChain, ZERO_ADDRESS } from './evm';
import { waitUntil } from './receiver';
import { TestApp } from './test-app';

/** The NFT transfer events, decoded by viem: the tests' own reading of the chain, apart from the service's. */
const NFT_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
  'event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
]);

export interface RawMovement {
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
  batchIndex: number | null;
  from: string;
  to: string;
  blockchainTokenId: string;
  amount: string;
}

/** Every movement of `address` in [fromBlock, toBlock] as eth_getLogs answers, in chain order (a batch's pairs apart). */
export async function rawMovements(chain: LocalChain, address: Address, fromBlock: number, toBlock: number): Promise<RawMovement[]> {
  const logs = await chain.publicClient.getLogs({ address, events: NFT_EVENTS, fromBlock: BigInt(fromBlock), toBlock: BigInt(toBlock) });
  const out: RawMovement[] = [];
  for (const log of logs) {
    const base = {
      blockNumber: Number(log.blockNumber),
      blockHash: log.blockHash,
      transactionHash: log.transactionHash,
      logIndex: log.logIndex,
      from: getAddress(log.args.from!),
      to: getAddress(log.args.to!),
    };
    if (log.eventName === 'Transfer') {
      out.push({ ...base, batchIndex: null, blockchainTokenId: log.args.tokenId!.toString(), amount: '1' });
    } else if (log.eventName === 'TransferSingle') {
      out.push({ ...base, batchIndex: null, blockchainTokenId: log.args.id!.toString(), amount: log.args.value!.toString() });
    } else {
      log.args.ids!.forEach((id, i) =>
        out.push({ ...base, batchIndex: i, blockchainTokenId: id.toString(), amount: log.args.values![i].toString() }),
      );
    }
  }
  return out.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex || (a.batchIndex ?? -1) - (b.batchIndex ?? -1));
}

export interface ExpectedHolder {
  address: string;
  tokenCount: number;
  amount: string;
}

const byAmountThenAddress = (a: { address: string; amount: string }, b: { address: string; amount: string }) => {
  const x = BigInt(a.amount);
  const y = BigInt(b.amount);
  if (x !== y) return x > y ? -1 : 1;
  return a.address.toLowerCase() < b.address.toLowerCase() ? -1 : 1;
};

/** Balances per (holder, token) after `block`: the sum of the movements up to it. */
function balancesAt(movements: readonly RawMovement[], block: number): Map<string, Map<string, bigint>> {
  const byHolder = new Map<string, Map<string, bigint>>();
  const add = (holder: string, id: string, delta: bigint) => {
    if (holder === ZERO_ADDRESS) return;
    const tokens = byHolder.get(holder) ?? new Map<string, bigint>();
    tokens.set(id, (tokens.get(id) ?? 0n) + delta);
    byHolder.set(holder, tokens);
  };
  for (const m of movements) {
    if (m.blockNumber > block) continue;
    add(m.from, m.blockchainTokenId, -BigInt(m.amount));
    add(m.to, m.blockchainTokenId, BigInt(m.amount));
  }
  return byHolder;
}

/** Holders at `block`, computed from the raw movements, in the order the API answers them. */
export function expectedHolders(movements: readonly RawMovement[], block: number): ExpectedHolder[] {
  const holders: ExpectedHolder[] = [];
  for (const [address, tokens] of balancesAt(movements, block)) {
    const held = [...tokens.values()].filter((v) => v > 0n);
    if (held.length > 0) holders.push({ address, tokenCount: held.length, amount: held.reduce((s, v) => s + v, 0n).toString() });
  }
  return holders.sort(byAmountThenAddress);
}

export function expectedOwners(movements: readonly RawMovement[], tokenId: string, block: number): { address: string; amount: string }[] {
  const owners: { address: string; amount: string }[] = [];
  for (const [address, tokens] of balancesAt(movements, block)) {
    const amount = tokens.get(tokenId) ?? 0n;
    if (amount > 0n) owners.push({ address, amount: amount.toString() });
  }
  return owners.sort(byAmountThenAddress);
}

export interface ContractView {
  id: string;
  chainId: number;
  address: string;
  fromBlock: number;
  standard: string | null;
  status: string;
  indexedBlock: number;
  createdAtUtc: string;
}

export async function registerContract(
  t: TestApp,
  org: TestOrganization,
  body: { chainId: number; address: string; fromBlock: number },
): Promise<ContractView> {
  const res = await t.http().post('/v1/contracts').set(bearer(org.adminKey)).send(body);
  if (res.status !== 201) throw new Error(`POST /v1/contracts answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as ContractView;
}

export async function contractView(t: TestApp, org: TestOrganization, id: string): Promise<ContractView> {
  const res = await t.http().get(`/v1/contracts/${id}`).set(bearer(org.adminKey)).expect(200);
  return res.body as ContractView;
}

/** Waits until the contract's index has reached `block`. */
export function waitIndexed(t: TestApp, org: TestOrganization, id: string, block: number, timeoutMs = 30_000): Promise<ContractView> {
  return waitUntil(
    () => contractView(t, org, id),
    (c) => c.indexedBlock >= block,
    timeoutMs,
  );
}

/** Every holder at a block, walking the pages; checks that each page answers the same block. */
export async function allHolders(
  t: TestApp,
  org: TestOrganization,
  id: string,
  query: Record<string, string | number>,
  pageSize = 2,
): Promise<{ blockNumber: number; holders: ExpectedHolder[] }> {
  const holders: ExpectedHolder[] = [];
  let pageKey: string | null = null;
  let blockNumber: number | null = null;
  do {
    const q: Record<string, string | number> = pageKey === null ? { ...query, pageSize } : { pageSize, pageKey };
    const res = await t.http().get(`/v1/contracts/${id}/holders`).query(q).set(bearer(org.adminKey));
    if (res.status !== 200) throw new Error(`holders answered ${res.status}: ${JSON.stringify(res.body)}`);
    if (blockNumber !== null) expect(res.body.blockNumber).toBe(blockNumber);
    blockNumber = res.body.blockNumber as number;
    holders.push(...(res.body.holders as ExpectedHolder[]));
    pageKey = res.body.nextPageKey as string | null;
  } while (pageKey !== null);
  return { blockNumber: blockNumber, holders };
}

/** Every transfer of the contract in [fromBlock, toBlock] as the API lists them, walking the pages. */
export async function allTransfers(
  t: TestApp,
  org: TestOrganization,
  id: string,
  query: Record<string, number> = {},
  pageSize = 3,
): Promise<RawMovement[]> {
  const transfers: RawMovement[] = [];
  let pageKey: string | null = null;
  do {
    const q: Record<string, string | number> = pageKey === null ? { ...query, pageSize } : { ...query, pageSize, pageKey };
    const res = await t.http().get(`/v1/contracts/${id}/transfers`).query(q).set(bearer(org.adminKey));
    if (res.status !== 200) throw new Error(`transfers answered ${res.status}: ${JSON.stringify(res.body)}`);
    transfers.push(...(res.body.transfers as RawMovement[]));
    pageKey = res.body.nextPageKey as string | null;
  } while (pageKey !== null);
  return transfers;
}
