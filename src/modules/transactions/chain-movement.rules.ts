import { creditFits } from './balance.rules';
import type { TransactionType } from './transaction.rules';

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** One NFT movement read from a chain log (one id/value pair of a TransferBatch each). */
export interface ChainMovement {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: Date;
  transactionHash: string;
  logIndex: number;
  /** 0-based position of the id/value pair in a TransferBatch; null for Transfer and TransferSingle. */
  batchIndex: number | null;
  /** Lowercase 0x address. */
  contractAddress: string;
  /** uint256 decimal. */
  blockchainTokenId: string;
  /** uint256 decimal (1 for ERC-721). */
  amount: string;
  /** Lowercase 0x addresses; the zero address for a mint or a burn. */
  from: string;
  to: string;
  standard: 'erc721' | 'erc1155';
}

/** The exactly-once key of a chain movement within an organization. */
export const movementKey = (organizationId: string, m: Pick<ChainMovement, 'chainId' | 'transactionHash' | 'logIndex' | 'batchIndex'>) =>
  `${organizationId}/${m.chainId}/${m.transactionHash}/${m.logIndex}/${m.batchIndex ?? -1}`;

/** A token as a chain names it within an organization (no database id needed to plan). */
export const chainTokenRef = (organizationId: string, m: Pick<ChainMovement, 'chainId' | 'contractAddress' | 'blockchainTokenId'>) =>
  `${organizationId}/${m.chainId}/${m.contractAddress}/${m.blockchainTokenId}`;

/** A wallet's balance of a chain token, keyed `walletId|tokenRef`. */
export const chainBalanceKey = (walletId: string, tokenRef: string) => `${walletId}|${tokenRef}`;

/**
 * The type of a movement seen by one organization, from which of its wallets (if any) sit on each
 * side: from the zero address a mint, to it a burn, between two of its wallets a transfer, from
 * an outside address a deposit, to one a withdrawal. Null when the movement does not concern the
 * organization, or moves nothing for it (a wallet sending to its own address).
 */
export function chainMovementType(
  movement: Pick<ChainMovement, 'from' | 'to'>,
  fromWalletId: string | null,
  toWalletId: string | null,
): TransactionType | null {
  const fromZero = movement.from === ZERO_ADDRESS;
  const toZero = movement.to === ZERO_ADDRESS;
  if (fromWalletId !== null && toWalletId !== null) return fromWalletId === toWalletId ? null : 'nftTransfer';
  if (toWalletId !== null) return fromZero ? 'nftMint' : 'nftDeposit';
  if (fromWalletId !== null) return toZero ? 'nftBurn' : 'nftWithdrawal';
  return null;
}

export interface PlannedChainRow {
  /** Position of the movement in the input. */
  index: number;
  organizationId: string;
  type: TransactionType;
  fromWalletId: string | null;
  toWalletId: string | null;
  tokenRef: string;
}

export interface ChainPlan {
  rows: PlannedChainRow[];
  /** (movement, organization) pairs not recorded: already recorded, uncovered debits with nothing else to record, no-ops. */
  skipped: number;
  /** Net change per balance (chainBalanceKey), only non-zero ones. */
  changes: Map<string, bigint>;
}

/**
 * Decides what each organization records of `movements` (chain order), replaying them over the
 * current balances (`balances`, by chainBalanceKey; missing is zero) so each sees what the earlier
 * ones left. `walletsByOrganization` maps each organization to its wallet at each watched address.
 * A movement already in `recorded` (movementKey) is skipped, as is a repeat within the list.
 * A debit the wallet cannot cover (its history lies before the followed range) is not a debit:
 * the sender counts as an outside address, so a transfer becomes a deposit and a withdrawal or
 * burn records nothing. Balances therefore never go below zero and always equal the sum of the
 * recorded movements.
 */
export function planChainMovements(
  movements: readonly ChainMovement[],
  walletsByOrganization: ReadonlyMap<string, ReadonlyMap<string, string>>,
  recorded: ReadonlySet<string>,
  balances: ReadonlyMap<string, bigint>,
): ChainPlan {
  const current = new Map(balances);
  const seen = new Set(recorded);
  const rows: PlannedChainRow[] = [];
  let skipped = 0;
  const concerned = organizationsByAddress(walletsByOrganization);

  for (const [index, m] of movements.entries()) {
    const amount = BigInt(m.amount);
    for (const organizationId of concerned(m)) {
      const wallets = walletsByOrganization.get(organizationId)!;
      let fromWalletId = m.from === ZERO_ADDRESS ? null : (wallets.get(m.from) ?? null);
      const toWalletId = m.to === ZERO_ADDRESS ? null : (wallets.get(m.to) ?? null);
      if (fromWalletId === null && toWalletId === null) continue;
      const key = movementKey(organizationId, m);
      if (seen.has(key) || amount <= 0n) {
        skipped++;
        continue;
      }
      const tokenRef = chainTokenRef(organizationId, m);
      if (fromWalletId !== null && fromWalletId !== toWalletId && (current.get(chainBalanceKey(fromWalletId, tokenRef)) ?? 0n) < amount) {
        fromWalletId = null;
      }
      const type = chainMovementType(m, fromWalletId, toWalletId);
      const creditKey = toWalletId === null ? null : chainBalanceKey(toWalletId, tokenRef);
      if (type === null || (creditKey !== null && !creditFits(current.get(creditKey) ?? 0n, amount))) {
        skipped++;
        continue;
      }
      seen.add(key);
      if (fromWalletId !== null) {
        const debitKey = chainBalanceKey(fromWalletId, tokenRef);
        current.set(debitKey, (current.get(debitKey) ?? 0n) - amount);
      }
      if (creditKey !== null) current.set(creditKey, (current.get(creditKey) ?? 0n) + amount);
      rows.push({ index, organizationId, type, fromWalletId, toWalletId, tokenRef });
    }
  }

  const changes = new Map<string, bigint>();
  for (const [key, amount] of current) {
    const delta = amount - (balances.get(key) ?? 0n);
    if (delta !== 0n) changes.set(key, delta);
  }
  return { rows, skipped, changes };
}

/**
 * The organizations a movement concerns (a wallet at its sender or receiver), in the order of
 * `walletsByOrganization`, found through an address index: the cost per movement does not grow
 * with the number of organizations watching other addresses.
 */
export function organizationsByAddress(
  walletsByOrganization: ReadonlyMap<string, ReadonlyMap<string, string>>,
): (m: Pick<ChainMovement, 'from' | 'to'>) => string[] {
  const rank = new Map([...walletsByOrganization.keys()].map((organizationId, i) => [organizationId, i]));
  const byAddress = new Map<string, string[]>();
  for (const [organizationId, wallets] of walletsByOrganization) {
    for (const address of wallets.keys()) {
      const list = byAddress.get(address) ?? [];
      list.push(organizationId);
      byAddress.set(address, list);
    }
  }
  return (m) => {
    const from = m.from === ZERO_ADDRESS ? [] : (byAddress.get(m.from) ?? []);
    const to = m.to === ZERO_ADDRESS ? [] : (byAddress.get(m.to) ?? []);
    if (from.length === 0) return to;
    if (to.length === 0) return from;
    return [...new Set([...from, ...to])].sort((x, y) => rank.get(x)! - rank.get(y)!);
  };
}

export interface RecordedChainRow {
  id: string;
  fromWalletId: string | null;
  toWalletId: string | null;
  tokenId: string;
  amount: string;
}

/**
 * The balance changes that undo `rows` (a wallet gives back what it received and gets back what
 * it sent), net per `walletId/tokenId`, in (wallet, token) order.
 */
export function revertChanges(rows: readonly RecordedChainRow[]): { walletId: string; tokenId: string; delta: bigint }[] {
  const net = new Map<string, bigint>();
  const add = (walletId: string, tokenId: string, delta: bigint) => {
    const key = `${walletId}/${tokenId}`;
    net.set(key, (net.get(key) ?? 0n) + delta);
  };
  for (const row of rows) {
    if (row.toWalletId !== null) add(row.toWalletId, row.tokenId, -BigInt(row.amount));
    if (row.fromWalletId !== null) add(row.fromWalletId, row.tokenId, BigInt(row.amount));
  }
  return [...net.entries()]
    .filter(([, delta]) => delta !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, delta]) => ({ walletId: key.slice(0, key.indexOf('/')), tokenId: key.slice(key.indexOf('/') + 1), delta }));
}
