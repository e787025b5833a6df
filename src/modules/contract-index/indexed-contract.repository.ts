import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { queryRows } from '../../database/raw-sql';

export type ContractStandard = 'erc721' | 'erc1155';
export type ContractStatus = 'backfilling' | 'live';

/** A registered contract and where its index stands (a row of indexed_contract). */
export interface IndexedContract {
  id: string;
  organizationId: string;
  chainId: number;
  address: string;
  fromBlock: number;
  standard: ContractStandard | null;
  standardKnown: boolean;
  status: ContractStatus;
  /** Last block whose transfers the reads include; fromBlock - 1 before the first. */
  indexedBlock: number;
  indexedHash: string | null;
  fromBlockTime: Date | null;
  checkpointChanges: number;
  checkpointSize: number;
  createdAt: string;
}

interface Row {
  id: string;
  organization_id: string;
  chain_id: string;
  address: string;
  from_block: string;
  standard: ContractStandard | null;
  standard_known: boolean;
  status: ContractStatus;
  indexed_block: string;
  indexed_hash: string | null;
  from_block_time: Date | string | null;
  checkpoint_changes: number;
  checkpoint_size: number;
  created_at: string | Date;
}

const COLUMNS = `"id", "organization_id", "chain_id", "address", "from_block", "standard", "standard_known", "status", "indexed_block",
  "indexed_hash", "from_block_time", "checkpoint_changes", "checkpoint_size", "created_at"::text as "created_at"`;

function toContract(row: Row): IndexedContract {
  return {
    id: row.id,
    organizationId: row.organization_id,
    chainId: Number(row.chain_id),
    address: row.address,
    fromBlock: Number(row.from_block),
    standard: row.standard,
    standardKnown: row.standard_known,
    status: row.status,
    indexedBlock: Number(row.indexed_block),
    indexedHash: row.indexed_hash,
    fromBlockTime: row.from_block_time === null ? null : new Date(row.from_block_time),
    checkpointChanges: row.checkpoint_changes,
    checkpointSize: row.checkpoint_size,
    createdAt: String(row.created_at),
  };
}

/** The tables the rows of one contract's index live in, besides its registration. */
const INDEX_TABLES = [
  'indexed_contract_block',
  'indexed_contract_transfer',
  'indexed_contract_balance',
  'indexed_contract_holder_change',
  'indexed_contract_checkpoint',
] as const;

/**
 * The registrations (indexed_contract): what the API lists and deletes, and the cursor and lease
 * the indexer moves. Statements of an indexer step take the step's EntityManager.
 */
@Injectable()
export class IndexedContractRepository {
  constructor(private readonly em: EntityManager) {}

  async countFor(em: EntityManager, organizationId: string): Promise<number> {
    const [row] = await queryRows<{ n: string }>(em, `select count(*) as n from "indexed_contract" where "organization_id" = ?`, [
      organizationId,
    ]);
    return Number(row.n);
  }

  /** Inserts a registration; null when the organization already indexes (chainId, address). */
  async insert(
    em: EntityManager,
    input: Pick<IndexedContract, 'organizationId' | 'chainId' | 'address' | 'fromBlock' | 'standard' | 'standardKnown'>,
  ): Promise<IndexedContract | null> {
    const [row] = await queryRows<Row>(
      em,
      `insert into "indexed_contract" ("id", "organization_id", "chain_id", "address", "from_block", "standard", "standard_known", "indexed_block")
       values (?, ?, ?, ?, ?, ?, ?, ?)
       on conflict ("organization_id", "chain_id", "address") do nothing
       returning ${COLUMNS}`,
      [
        uuidv7(),
        input.organizationId,
        input.chainId,
        input.address,
        input.fromBlock,
        input.standard,
        input.standardKnown,
        input.fromBlock - 1,
      ],
    );
    return row ? toContract(row) : null;
  }

  async find(organizationId: string, id: string): Promise<IndexedContract | null> {
    const [row] = await queryRows<Row>(this.em, `select ${COLUMNS} from "indexed_contract" where "organization_id" = ? and "id" = ?`, [
      organizationId,
      id,
    ]);
    return row ? toContract(row) : null;
  }

  /** Oldest first (ids are UUIDv7), after `afterId`. */
  async page(organizationId: string, afterId: string | null, limit: number): Promise<IndexedContract[]> {
    const rows = await queryRows<Row>(
      this.em,
      `select ${COLUMNS} from "indexed_contract" where "organization_id" = ? and (?::uuid is null or "id" > ?::uuid) order by "id" limit ?`,
      [organizationId, afterId, afterId, limit],
    );
    return rows.map(toContract);
  }

  /** Deletes a registration and its whole index, in one transaction; false when unknown. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    return this.em.fork().transactional(async (em) => {
      const rows = await queryRows(em, `delete from "indexed_contract" where "organization_id" = ? and "id" = ? returning "id"`, [
        organizationId,
        id,
      ]);
      if (rows.length === 0) return false;
      for (const table of INDEX_TABLES) await queryRows(em, `delete from "${table}" where "contract_id" = ?`, [id]);
      return true;
    });
  }

  /**
   * Takes or renews the lease of every contract of the chain that is free, lapsed or already
   * `owner`'s, and returns them, least indexed first: one indexer works on a contract at a time.
   */
  async leaseAll(chainId: number, owner: string, leaseMs: number): Promise<IndexedContract[]> {
    const rows = await queryRows<Row>(
      this.em,
      `update "indexed_contract" set "lease_owner" = ?, "lease_until" = clock_timestamp() + ? * interval '1 millisecond'
       where "chain_id" = ? and ("lease_owner" = ? or "lease_owner" is null or "lease_until" < clock_timestamp())
       returning ${COLUMNS}`,
      [owner, leaseMs, chainId, owner],
    );
    return rows.map(toContract).sort((a, b) => a.indexedBlock - b.indexedBlock);
  }

  async releaseAll(chainId: number, owner: string): Promise<void> {
    await queryRows(
      this.em,
      `update "indexed_contract" set "lease_owner" = null, "lease_until" = null where "chain_id" = ? and "lease_owner" = ?`,
      [chainId, owner],
    );
  }

  /** The registration locked for a step: null when deleted meanwhile or no longer `owner`'s. */
  async lockForStep(em: EntityManager, id: string, owner: string): Promise<IndexedContract | null> {
    const [row] = await queryRows<Row & { lease_owner: string | null }>(
      em,
      `select ${COLUMNS}, "lease_owner" from "indexed_contract" where "id" = ? for update`,
      [id],
    );
    return row && row.lease_owner === owner ? toContract(row) : null;
  }

  async recordStandard(id: string, standard: ContractStandard | null): Promise<void> {
    await queryRows(this.em, `update "indexed_contract" set "standard" = ?, "standard_known" = true where "id" = ?`, [standard, id]);
  }

  async recordError(id: string, error: string | null): Promise<void> {
    await queryRows(this.em, `update "indexed_contract" set "last_error" = ? where "id" = ?`, [error, id]);
  }

  /** Moves the cursor (forward after a step, back after a reorg). */
  async moveTo(
    em: EntityManager,
    id: string,
    to: {
      indexedBlock: number;
      indexedHash: string | null;
      fromBlockTime?: Date | null;
      live?: boolean;
      checkpointChanges: number;
      checkpointSize?: number;
    },
  ): Promise<void> {
    await queryRows(
      em,
      `update "indexed_contract" set "indexed_block" = ?, "indexed_hash" = ?, "from_block_time" = coalesce(?, "from_block_time"),
         "status" = case when ? then 'live' else "status" end, "checkpoint_changes" = ?, "checkpoint_size" = coalesce(?, "checkpoint_size"),
         "last_error" = null
       where "id" = ?`,
      [to.indexedBlock, to.indexedHash, to.fromBlockTime ?? null, to.live ?? false, to.checkpointChanges, to.checkpointSize ?? null, id],
    );
  }
}
