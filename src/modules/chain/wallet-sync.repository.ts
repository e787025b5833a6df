import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { queryRows } from '../../database/raw-sql';
import { LOCK_NAMES } from '../../database/lock-keys';
import { SyncRequestOutcome, syncRequestOutcome } from './wallet-sync.rules';

export type WalletSyncStatus = 'pending' | 'running' | 'done' | 'failed';

/** A replay of one wallet's history on one chain (a row of wallet_sync). */
export interface WalletSync {
  id: string;
  organizationId: string;
  walletId: string;
  chainId: number;
  address: string;
  fromBlock: number;
  /** Fixed when the replay starts: the block the follower had applied then (the follower does the rest). */
  toBlock: number | null;
  nextBlock: number;
  status: WalletSyncStatus;
  recorded: number;
  lastError: string | null;
  createdAt: Date;
}

interface Row {
  id: string;
  organization_id: string;
  wallet_id: string;
  chain_id: string;
  address: string;
  from_block: string;
  to_block: string | null;
  next_block: string;
  status: WalletSyncStatus;
  recorded: number;
  last_error: string | null;
  created_at: Date | string;
}

const COLUMNS = `"id", "organization_id", "wallet_id", "chain_id", "address", "from_block", "to_block", "next_block", "status",
  "recorded", "last_error", "created_at"`;

function toSync(row: Row): WalletSync {
  return {
    id: row.id,
    organizationId: row.organization_id,
    walletId: row.wallet_id,
    chainId: Number(row.chain_id),
    address: row.address,
    fromBlock: Number(row.from_block),
    toBlock: row.to_block === null ? null : Number(row.to_block),
    nextBlock: Number(row.next_block),
    status: row.status,
    recorded: row.recorded,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
  };
}

@Injectable()
export class WalletSyncRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * Opens a replay of (wallet, chain) from `fromBlock`, unless the organization's open replays
   * say otherwise (syncRequestOutcome): the same request open answers it, another start block of
   * the wallet and chain is in progress, or the organization is at its limit. The organization's
   * requests are taken one at a time (a transaction-scoped advisory lock on it), so two at once
   * cannot both pass the count; the unique index on the open (wallet, chain) stands behind it.
   */
  async request(input: {
    organizationId: string;
    walletId: string;
    chainId: number;
    address: string;
    fromBlock: number;
  }): Promise<Exclude<SyncRequestOutcome<WalletSync>, { kind: 'create' }> | { kind: 'created'; sync: WalletSync }> {
    return this.em.fork().transactional(async (em) => {
      await queryRows(em, `select pg_advisory_xact_lock(hashtextextended(?, 0))`, [LOCK_NAMES.walletSync(input.organizationId)]);
      const open = await queryRows<Row>(
        em,
        `select ${COLUMNS} from "wallet_sync" where "organization_id" = ? and "status" in ('pending', 'running') order by "created_at", "id"`,
        [input.organizationId],
      );
      const outcome = syncRequestOutcome(open.map(toSync), input);
      if (outcome.kind !== 'create') return outcome;
      const [created] = await queryRows<Row>(
        em,
        `insert into "wallet_sync" ("id", "organization_id", "wallet_id", "chain_id", "address", "from_block", "next_block")
         values (?, ?, ?, ?, ?, ?, ?)
         returning ${COLUMNS}`,
        [uuidv7(), input.organizationId, input.walletId, input.chainId, input.address, input.fromBlock, input.fromBlock],
      );
      return { kind: 'created' as const, sync: toSync(created) };
    });
  }

  /**
   * The next replay of each organization with open replays on a chain (its oldest), one row per
   * organization: what the chain's turns choose from (nextInTurn).
   */
  async openHeads(chainId: number): Promise<WalletSync[]> {
    const rows = await queryRows<Row>(
      this.em,
      `select distinct on ("organization_id") ${COLUMNS} from "wallet_sync"
        where "chain_id" = ? and "status" in ('pending', 'running')
        order by "organization_id", "created_at", "id"`,
      [chainId],
    );
    return rows.map(toSync);
  }

  /** A replay while it is open; null once it is done or failed. */
  async findOpen(id: string): Promise<WalletSync | null> {
    const [row] = await queryRows<Row>(
      this.em,
      `select ${COLUMNS} from "wallet_sync" where "id" = ? and "status" in ('pending', 'running')`,
      [id],
    );
    return row ? toSync(row) : null;
  }

  /** Locks an open replay inside a step's transaction; null when it is no longer open. */
  async lockOpen(em: EntityManager, id: string): Promise<WalletSync | null> {
    const [row] = await queryRows<Row>(
      em,
      `select ${COLUMNS} from "wallet_sync" where "id" = ? and "status" in ('pending', 'running') for update`,
      [id],
    );
    return row ? toSync(row) : null;
  }

  async begin(id: string, toBlock: number): Promise<void> {
    await queryRows(
      this.em,
      `update "wallet_sync" set "status" = 'running', "to_block" = ?, "updated_at" = clock_timestamp() where "id" = ? and "to_block" is null`,
      [toBlock, id],
    );
  }

  async advance(em: EntityManager, id: string, nextBlock: number, recorded: number, done: boolean): Promise<void> {
    await queryRows(
      em,
      `update "wallet_sync" set "next_block" = ?, "recorded" = "recorded" + ?, "status" = ?, "last_error" = null,
         "completed_at" = case when ? then clock_timestamp() else null end, "updated_at" = clock_timestamp()
       where "id" = ?`,
      [nextBlock, recorded, done ? 'done' : 'running', done, id],
    );
  }

  async fail(id: string, error: string, final: boolean): Promise<void> {
    await queryRows(
      this.em,
      `update "wallet_sync" set "last_error" = ?, "status" = case when ? then 'failed' else "status" end,
         "completed_at" = case when ? then clock_timestamp() else "completed_at" end, "updated_at" = clock_timestamp()
       where "id" = ?`,
      [error, final, final, id],
    );
  }
}
