import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { queryRows } from '../../../database/raw-sql';
import type { MetadataContract } from '../../tokens/token-metadata-sync.service';
import { BREAKER_FAILURES_TO_OPEN, BREAKER_PAUSE_MS, BreakerState } from './metadata-breaker.rules';

export const contractKey = (contract: MetadataContract): string => `${contract.chainId}/${contract.contractAddress}`;

interface BreakerRow {
  chain_id: string;
  contract_address: string;
  failures: number;
  open_until: Date | string | null;
  trial_until: Date | string | null;
  db_now: Date | string;
}

const toDate = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

/**
 * The chain module's metadata_breaker table: one row per contract whose documents failed to
 * answer lately (metadata-breaker.rules.ts). It lives in PostgreSQL, not in a process: every
 * indexer or all process fetches metadata, and each must see a breaker another one opened; each
 * change is one atomic statement, so concurrent workers count every failure and let one trial
 * through. Rows exist only for contracts that failed since their last answer.
 */
@Injectable()
export class MetadataBreakerRepository {
  constructor(private readonly em: EntityManager) {}

  /** The breakers of these contracts (absent: closed), with the database's clock to judge them by. */
  async find(contracts: MetadataContract[]): Promise<{ states: Map<string, BreakerState>; now: Date }> {
    const rows = await queryRows<BreakerRow>(
      this.em,
      `select b."chain_id"::text as "chain_id", b."contract_address", b."failures", b."open_until", b."trial_until", now() as "db_now"
         from unnest(?::bigint[], ?::text[]) as c("chain_id", "contract_address")
         left join "metadata_breaker" b on b."chain_id" = c."chain_id" and b."contract_address" = c."contract_address"`,
      [contracts.map((c) => c.chainId), contracts.map((c) => c.contractAddress)],
    );
    const states = new Map<string, BreakerState>();
    for (const row of rows) {
      if (row.chain_id === null) continue;
      states.set(contractKey({ chainId: Number(row.chain_id), contractAddress: row.contract_address }), {
        failures: row.failures,
        openUntil: toDate(row.open_until),
        trialUntil: toDate(row.trial_until),
      });
    }
    return { states, now: rows.length > 0 ? new Date(rows[0].db_now) : new Date() };
  }

  /**
   * Counts a timeout or connection failure of one of the contract's documents. The failure that
   * reaches the threshold while the breaker is not open (closed, or a trial that failed) opens it
   * for BREAKER_PAUSE_MS: `opened` is then true. `openUntil` is set while the breaker is open;
   * `failures` counts the failures in a row so far.
   */
  async recordUnreachable(contract: MetadataContract): Promise<{ failures: number; opened: boolean; openUntil: Date | null }> {
    const [row] = await queryRows<{ failures: number; open_until: Date | string | null; opened: boolean; is_open: boolean }>(
      this.em,
      `insert into "metadata_breaker" as b ("chain_id", "contract_address", "failures", "updated_at")
       values (?, ?, 1, now())
       on conflict ("chain_id", "contract_address") do update set
         "failures" = b."failures" + 1,
         "open_until" = case when b."failures" + 1 >= ? and (b."open_until" is null or b."open_until" <= now())
                             then now() + ? * interval '1 millisecond' else b."open_until" end,
         "opened_at" = case when b."failures" + 1 >= ? and (b."open_until" is null or b."open_until" <= now())
                            then now() else b."opened_at" end,
         "trial_until" = null,
         "updated_at" = now()
       returning b."failures", b."open_until", coalesce(b."opened_at" = now(), false) as "opened", coalesce(b."open_until" > now(), false) as "is_open"`,
      [contract.chainId, contract.contractAddress, BREAKER_FAILURES_TO_OPEN, BREAKER_PAUSE_MS, BREAKER_FAILURES_TO_OPEN],
    );
    return { failures: row.failures, opened: row.opened, openUntil: row.is_open ? toDate(row.open_until) : null };
  }

  /** The contract's server answered: the failures in a row start again from zero, an open breaker closes. */
  async recordAnswered(contract: MetadataContract): Promise<void> {
    await queryRows(this.em, `delete from "metadata_breaker" where "chain_id" = ? and "contract_address" = ?`, [
      contract.chainId,
      contract.contractAddress,
    ]);
  }

  /**
   * Takes the one trial fetch of a breaker whose pause is over, for `leaseMs` (a worker that dies
   * leaves it to the next claim after that). False when the breaker is not due for a trial, or
   * another worker took it.
   */
  async takeTrial(contract: MetadataContract, leaseMs: number): Promise<boolean> {
    const rows = await queryRows(
      this.em,
      `update "metadata_breaker" set "trial_until" = now() + ? * interval '1 millisecond', "updated_at" = now()
        where "chain_id" = ? and "contract_address" = ? and "failures" >= ? and "open_until" <= now()
          and ("trial_until" is null or "trial_until" <= now())
        returning 1`,
      [leaseMs, contract.chainId, contract.contractAddress, BREAKER_FAILURES_TO_OPEN],
    );
    return rows.length > 0;
  }
}
