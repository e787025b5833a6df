import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { queryRows } from '../../database/raw-sql';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { SpamInbox } from '../spam/spam-inbox';
import { ChainTokenKey, chainTokenKey, TokensService } from '../tokens/tokens.service';
import { WalletsService } from '../wallets/wallets.service';
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
    const lockedAmounts = await lockBalances(em, lockPairs);
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
    const inserted = await queryRows<{ id: string }>(
      em,
      `insert into "nft_transaction" ("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount",
         "source", "status", "chain_id", "block_number", "block_hash", "transaction_hash", "log_index", "batch_index", "chain_from", "chain_to")
       select r."id", r."created_at", r."organization_id", r."type", r."token_id", r."from_wallet_id", r."to_wallet_id", r."amount",
              'chain', 'confirmed', r."chain_id", r."block_number", r."block_hash", r."transaction_hash", r."log_index", r."batch_index",
              r."chain_from", r."chain_to"
         from unnest(?::uuid[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::uuid[], ?::numeric[],
                     ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::int[], ?::int[], ?::text[], ?::text[])
              with ordinality as r("id", "created_at", "organization_id", "type", "token_id", "from_wallet_id", "to_wallet_id", "amount",
                     "chain_id", "block_number", "block_hash", "transaction_hash", "log_index", "batch_index", "chain_from", "chain_to", "n")
        order by r."n"
       on conflict ("organization_id", "chain_id", "transaction_hash", "log_index", coalesce("batch_index", -1))
         where "chain_id" is not null and "status" = 'confirmed'
       do nothing
       returning "id"`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.organizationId),
        rows.map((r) => r.type),
        rows.map((r) => r.tokenId),
        rows.map((r) => r.fromWalletId),
        rows.map((r) => r.toWalletId),
        rows.map((r) => r.movement.amount),
        rows.map((r) => r.movement.chainId),
        rows.map((r) => r.movement.blockNumber),
        rows.map((r) => r.movement.blockHash),
        rows.map((r) => r.movement.transactionHash),
        rows.map((r) => r.movement.logIndex),
        rows.map((r) => r.movement.batchIndex),
        rows.map((r) => r.movement.from),
        rows.map((r) => r.movement.to),
      ],
    );
    if (inserted.length !== rows.length) {
      // Only a writer that did not lock the same balance rows first could have raced us: the plan
      // is no longer exact, so nothing of it may commit. The caller's transaction retries.
      throw new Error(`Chain movements recorded concurrently: ${rows.length - inserted.length} of ${rows.length} already present.`);
    }

    const deltas = [...plan.changes].map(([key, delta]) => {
      const [walletId, tokenRef] = [key.slice(0, key.indexOf('|')), key.slice(key.indexOf('|') + 1)];
      return { walletId, tokenId: tokens.get(tokenRef)!, organizationId: tokenRef.slice(0, tokenRef.indexOf('/')), delta };
    });
    await addToBalances(em, deltas, lockedAmounts);
    // Every transaction whose movements the service records has its whole receipt judged for spam.
    await this.spam.transactionsRecorded(
      em,
      rows.map((r) => ({ chainId: r.movement.chainId, transactionHash: r.movement.transactionHash })),
    );

    for (const [organizationId, orgRows] of groupBy(rows, (r) => r.organizationId)) {
      await this.events.publishMany(
        em,
        organizationId,
        orgRows.map((row) => ({
          webhookType: 'transaction',
          resourceType: 'Transaction',
          action: 'create',
          resourceId: row.id,
          changes: null,
          contractAddress: row.movement.contractAddress,
        })),
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
    const rows = await queryRows<RecordedChainRow & { organizationId: string; contractAddress: string }>(
      em,
      `select x."id", x."organization_id" as "organizationId", x."from_wallet_id" as "fromWalletId", x."to_wallet_id" as "toWalletId",
              x."token_id" as "tokenId", x."amount"::text as "amount", t."contract_address" as "contractAddress"
         from "nft_transaction" x
         join "token" t on t."id" = x."token_id"
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
    await addToBalances(
      em,
      changes.map((c) => ({ ...c, organizationId: organizationOfToken.get(c.tokenId)! })),
      await lockBalances(em, changes),
    );
    await queryRows(em, `update "nft_transaction" set "status" = 'reverted' where "id" = any(?::uuid[])`, [rows.map((r) => r.id)]);

    for (const [organizationId, orgRows] of groupBy(rows, (r) => r.organizationId)) {
      await this.events.publishMany(
        em,
        organizationId,
        orgRows.map((row) => ({
          webhookType: 'transaction',
          resourceType: 'Transaction',
          action: 'update',
          resourceId: row.id,
          changes: { status: 'reverted' },
          contractAddress: row.contractAddress,
        })),
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

/**
 * Locks the existing balance rows of `pairs` in ONE statement that walks them in (wallet, token)
 * order, the order every balance writer locks in, without writing them. Returns the locked
 * amounts by `walletId/tokenId`; a pair without a row holds zero (its row is created when credited).
 */
async function lockBalances(em: EntityManager, pairs: { walletId: string; tokenId: string }[]): Promise<Map<string, bigint>> {
  if (pairs.length === 0) return new Map();
  const sorted = [...pairs].sort((a, b) => compare(a.walletId, b.walletId) || compare(a.tokenId, b.tokenId));
  const rows = await queryRows<{ wallet_id: string; token_id: string; amount: string }>(
    em,
    `select b."wallet_id", b."token_id", b."amount"::text as "amount"
       from unnest(?::uuid[], ?::uuid[]) with ordinality as p("wallet_id", "token_id", "n")
       cross join lateral (
         select * from "balance" b where b."wallet_id" = p."wallet_id" and b."token_id" = p."token_id" for update
       ) b
      order by p."n"`,
    [sorted.map((p) => p.walletId), sorted.map((p) => p.tokenId)],
  );
  return new Map(rows.map((row) => [`${row.wallet_id}/${row.token_id}`, BigInt(row.amount)]));
}

/**
 * Adds each delta to its balance row, in (wallet, token) order: rows locked by lockBalances are
 * updated in place (one statement), the others (never held: only credits reach them) are
 * inserted, or added to if one appeared meanwhile (one statement). The table's `amount >= 0` check is the last guard: a
 * negative result fails the whole transaction.
 */
async function addToBalances(
  em: EntityManager,
  deltas: { walletId: string; tokenId: string; organizationId: string; delta: bigint }[],
  locked: ReadonlyMap<string, bigint>,
): Promise<void> {
  const sorted = [...deltas].sort((a, b) => compare(a.walletId, b.walletId) || compare(a.tokenId, b.tokenId));
  const existing = sorted.filter((d) => locked.has(`${d.walletId}/${d.tokenId}`));
  const fresh = sorted.filter((d) => !locked.has(`${d.walletId}/${d.tokenId}`));
  if (existing.length > 0) {
    await queryRows(
      em,
      `update "balance" b set "amount" = b."amount" + c."delta", "updated_at" = now()
         from unnest(?::uuid[], ?::uuid[], ?::numeric[]) as c("wallet_id", "token_id", "delta")
        where b."wallet_id" = c."wallet_id" and b."token_id" = c."token_id"`,
      [existing.map((d) => d.walletId), existing.map((d) => d.tokenId), existing.map((d) => d.delta.toString())],
    );
  }
  if (fresh.length > 0) {
    await queryRows(
      em,
      `insert into "balance" ("wallet_id", "token_id", "organization_id", "amount", "updated_at")
       select d."wallet_id", d."token_id", d."organization_id", d."delta", now()
         from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::numeric[]) with ordinality as d("wallet_id", "token_id", "organization_id", "delta", "n")
        order by d."n"
       on conflict ("wallet_id", "token_id") do update set "amount" = "balance"."amount" + excluded."amount", "updated_at" = excluded."updated_at"`,
      [fresh.map((d) => d.walletId), fresh.map((d) => d.tokenId), fresh.map((d) => d.organizationId), fresh.map((d) => d.delta.toString())],
    );
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
