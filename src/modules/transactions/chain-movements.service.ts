import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { queryRows } from '../../database/raw-sql';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { SpamInbox } from '../spam/spam-inbox';
import { ChainTokenKey, chainTokenKey, TokensService } from '../tokens/tokens.service';
import { WalletsService } from '../wallets/wallets.service';
import { BalanceRepository } from './balance.repository';
import { insertChainMovements } from './nft-transaction.repository';
import {
  chainBalanceKey,
  ChainMovement,
  chainTokenRef,
  movementKey,
  organizationsByAddress,
  planChainMovements,
  RecordedChainRow,
  revertChanges,
  ZERO_ADDRESS,
} from './chain-movement.rules';
import { transactionCreated, transactionReverted } from '../domain-events/domain-event.catalogue';

export type { ChainMovement } from './chain-movement.rules';

export interface RecordResult {
  /** Transactions written (one per movement and organization that sees it). */
  recorded: number;
  /** (movement, organization) pairs not written: already recorded, or an uncovered debit with nothing to record. */
  skipped: number;
  /** Tokens created on first sight by this call. */
  newTokenIds: string[];
}

/**
 * Writes what the chain followers read into the ledger: the same transaction rows, balances and
 * `transaction` webhooks (same outbox) as API writes, with the chain's coordinates. Every method
 * runs on the caller's transaction and issues a fixed number of set statements, whatever the
 * number of movements, addresses or organizations (one event insert per organization).
 */
@Injectable()
export class ChainMovementsService {
  constructor(
    private readonly tokens: TokensService,
    private readonly wallets: WalletsService,
    private readonly events: DomainEventPublisher,
    private readonly balances: BalanceRepository,
    private readonly spam: SpamInbox,
  ) {}

  /**
   * Records `movements` (in chain order) for every organization holding one of their addresses.
   * Exactly once per (organization, chain, transaction hash, log index, batch index): a movement
   * already confirmed is skipped, and the insert itself does nothing on that key, so replaying a
   * range records nothing twice. A debit the wallet cannot cover (its history lies before the
   * followed range) is not a debit: the sender counts as an outside address (a transfer becomes
   * a deposit; a withdrawal or burn records nothing and counts as skipped).
   *
   * `only.organizationId` records for that organization alone, as if no other watched these
   * addresses: a wallet sync replays history for the organization that asked for it, never into
   * another's ledger.
   */
  async record(em: EntityManager, movements: ChainMovement[], only: { organizationId?: string } = {}): Promise<RecordResult> {
    if (movements.length === 0) return { recorded: 0, skipped: 0, newTokenIds: [] };

    // 1. Who watches these addresses: every organization with a wallet there (its oldest stands for it).
    const addresses = [...new Set(movements.flatMap((m) => [m.from, m.to]).filter((a) => a !== ZERO_ADDRESS))];
    const walletsByOrganization = new Map<string, Map<string, string>>();
    for (const wallet of await this.wallets.walletsAtAddresses(em, addresses)) {
      if (only.organizationId !== undefined && wallet.organizationId !== only.organizationId) continue;
      const wallets = walletsByOrganization.get(wallet.organizationId) ?? new Map<string, string>();
      if (!wallets.has(wallet.address)) wallets.set(wallet.address, wallet.walletId);
      walletsByOrganization.set(wallet.organizationId, wallets);
    }
    const concerns = organizationsByAddress(walletsByOrganization);
    const concerned: { movement: ChainMovement; organizationId: string; walletIds: string[] }[] = [];
    for (const movement of movements) {
      for (const organizationId of concerns(movement)) {
        const wallets = walletsByOrganization.get(organizationId)!;
        const walletIds = [wallets.get(movement.from), wallets.get(movement.to)].filter((id): id is string => id !== undefined);
        concerned.push({ movement, organizationId, walletIds });
      }
    }
    const unconcerned = movements.length - new Set(concerned.map((c) => c.movement)).size;
    if (concerned.length === 0) return { recorded: 0, skipped: unconcerned, newTokenIds: [] };

    // 2. The tokens already known, and every existing balance row they may touch locked in
    //    (wallet, token) order, so the in-memory replay below is exact until commit.
    const tokenKeys = uniqueBy(
      concerned.map(({ movement, organizationId }) => tokenKeyOf(organizationId, movement)),
      chainTokenKey,
    );
    const known = await this.tokens.findChainTokens(em, tokenKeys);
    const lockPairs = uniqueBy(
      concerned.flatMap(({ movement, organizationId, walletIds }) => {
        const tokenId = known.get(chainTokenRef(organizationId, movement));
        return tokenId === undefined ? [] : walletIds.map((walletId) => ({ walletId, tokenId }));
      }),
      (p) => `${p.walletId}/${p.tokenId}`,
    );
    const lockedAmounts = await this.balances.lockExisting(em, lockPairs);
    const refOfToken = new Map([...known].map(([ref, tokenId]) => [tokenId, ref]));
    const balances = new Map<string, bigint>();
    for (const [pair, amount] of lockedAmounts) {
      const [walletId, tokenId] = pair.split('/');
      balances.set(chainBalanceKey(walletId, refOfToken.get(tokenId)!), amount);
    }

    // 3. What is already recorded, then the plan (pure rules).
    const recorded = await this.recordedKeys(em, concerned);
    const plan = planChainMovements(movements, walletsByOrganization, recorded, balances);
    if (plan.rows.length === 0) return { recorded: 0, skipped: plan.skipped + unconcerned, newTokenIds: [] };

    // 4. Tokens first seen here (with their `nft` create webhooks), then rows, balances and events.
    const { tokens, created } = await this.tokens.ensureChainTokensReporting(
      em,
      plan.rows.map((row) => tokenKeyOf(row.organizationId, movements[row.index])),
    );
    const rows = plan.rows.map((row) => {
      const m = movements[row.index];
      return {
        id: uuidv7(),
        createdAt: m.blockTimestamp,
        organizationId: row.organizationId,
        type: row.type,
        tokenId: tokens.get(row.tokenRef)!,
        fromWalletId: row.fromWalletId,
        toWalletId: row.toWalletId,
        movement: m,
      };
    });
    const inserted = await insertChainMovements(em, rows);
    if (inserted !== rows.length) {
      // Only a writer that did not lock the same balance rows first could have raced us: the plan
      // is no longer exact, so nothing of it may commit. The caller's transaction retries.
      throw new Error(`Chain movements recorded concurrently: ${rows.length - inserted} of ${rows.length} already present.`);
    }

    const deltas = [...plan.changes].map(([key, delta]) => {
      const [walletId, tokenRef] = [key.slice(0, key.indexOf('|')), key.slice(key.indexOf('|') + 1)];
      return { walletId, tokenId: tokens.get(tokenRef)!, organizationId: tokenRef.slice(0, tokenRef.indexOf('/')), delta };
    });
    await this.balances.applyChanges(em, deltas, lockedAmounts);
    // Every transaction whose movements the service records has its whole receipt judged for spam.
    await this.spam.transactionsRecorded(
      em,
      rows.map((r) => ({ chainId: r.movement.chainId, transactionHash: r.movement.transactionHash })),
    );

    for (const [organizationId, orgRows] of groupBy(rows, (r) => r.organizationId)) {
      await this.events.publishMany(
        em,
        organizationId,
        orgRows.map((row) => transactionCreated(row.id, row.movement.contractAddress)),
      );
    }
    return { recorded: rows.length, skipped: plan.skipped + unconcerned, newTokenIds: created };
  }

  /**
   * Reverts every confirmed movement of `chainId` from block `fromBlock` on (a reorg replaced
   * those blocks), newest first: status `reverted`, balances restored, and a `transaction`
   * `update` webhook with `changes: {"status": "reverted"}` each. Returns how many were reverted.
   */
  async revertFrom(em: EntityManager, chainId: number, fromBlock: number): Promise<number> {
    const rows = await queryRows<RecordedChainRow & { organizationId: string }>(
      em,
      `select x."id", x."organization_id" as "organizationId", x."from_wallet_id" as "fromWalletId", x."to_wallet_id" as "toWalletId",
              x."token_id" as "tokenId", x."amount"::text as "amount"
         from "nft_transaction" x
        where x."chain_id" = ? and x."block_number" >= ? and x."status" = 'confirmed'
        order by x."block_number" desc, x."log_index" desc, coalesce(x."batch_index", -1) desc, x."id" desc
          for update of x`,
      [chainId, fromBlock],
    );
    if (rows.length === 0) return 0;

    // Undone in one net step: newest first from a consistent ledger passes only through states
    // that once were, so no intermediate balance is negative and neither is the net result.
    const changes = revertChanges(rows);
    // A sender whose row was never written (its net change was zero) gets the row back.
    const organizationOfToken = new Map(rows.map((r) => [r.tokenId, r.organizationId]));
    await this.balances.applyChanges(
      em,
      changes.map((c) => ({ ...c, organizationId: organizationOfToken.get(c.tokenId)! })),
      await this.balances.lockExisting(em, changes),
    );
    // Events carry the contract address (endpoint filters): the tokens module knows it.
    const contractOf = await this.tokens.contractAddressesInTransaction(em, [...organizationOfToken.keys()]);
    await queryRows(em, `update "nft_transaction" set "status" = 'reverted' where "id" = any(?::uuid[])`, [rows.map((r) => r.id)]);

    for (const [organizationId, orgRows] of groupBy(rows, (r) => r.organizationId)) {
      await this.events.publishMany(
        em,
        organizationId,
        orgRows.map((row) => transactionReverted(row.id, contractOf.get(row.tokenId) ?? null)),
      );
    }
    return rows.length;
  }

  /** The exactly-once keys among `concerned` that are already confirmed, in one statement. */
  private async recordedKeys(em: EntityManager, concerned: { movement: ChainMovement; organizationId: string }[]): Promise<Set<string>> {
    const rows = await queryRows<{
      organization_id: string;
      chain_id: string;
      transaction_hash: string;
      log_index: number;
      batch_index: number;
    }>(
      em,
      `select x."organization_id", x."chain_id"::text as "chain_id", x."transaction_hash", x."log_index", coalesce(x."batch_index", -1) as "batch_index"
         from unnest(?::uuid[], ?::bigint[], ?::text[], ?::int[], ?::int[]) as k("organization_id", "chain_id", "transaction_hash", "log_index", "batch_index")
         -- LATERAL: one probe of the exactly-once index per key. A plain join lets the planner,
         -- which guesses 10 rows for unnest, walk the whole index once per key instead.
         cross join lateral (
           select x."organization_id", x."chain_id", x."transaction_hash", x."log_index", x."batch_index" from "nft_transaction" x
            where x."organization_id" = k."organization_id" and x."chain_id" = k."chain_id" and x."transaction_hash" = k."transaction_hash"
              and x."log_index" = k."log_index" and coalesce(x."batch_index", -1) = k."batch_index"
              and x."chain_id" is not null and x."status" = 'confirmed'
         ) x`,
      [
        concerned.map((c) => c.organizationId),
        concerned.map((c) => c.movement.chainId),
        concerned.map((c) => c.movement.transactionHash),
        concerned.map((c) => c.movement.logIndex),
        concerned.map((c) => c.movement.batchIndex ?? -1),
      ],
    );
    return new Set(
      rows.map((row) =>
        movementKey(row.organization_id, {
          chainId: Number(row.chain_id),
          transactionHash: row.transaction_hash,
          logIndex: row.log_index,
          batchIndex: row.batch_index === -1 ? null : row.batch_index,
        }),
      ),
    );
  }
}

function tokenKeyOf(organizationId: string, m: ChainMovement): ChainTokenKey {
  return {
    organizationId,
    chainId: m.chainId,
    contractAddress: m.contractAddress,
    blockchainTokenId: m.blockchainTokenId,
    standard: m.standard,
  };
}

function uniqueBy<T>(values: T[], key: (value: T) => string): T[] {
  return [...new Map(values.map((value) => [key(value), value])).values()];
}

function groupBy<T>(values: T[], key: (value: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const value of values) {
    const list = groups.get(key(value)) ?? [];
    list.push(value);
    groups.set(key(value), list);
  }
  return groups;
}
