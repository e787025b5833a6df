import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretKeyring } from '../config/secrets-config';
import { outsideTransaction, queryRows } from './raw-sql';
import { needsReseal, resealSecret, SecretBoxError } from '../common/crypto/secret-box';

/**
 * A column holding secrets sealed with the secret box. Its owning module lists it (one line per
 * column) and runs {@link resealColumn} from its own repository, so the table stays the owner's.
 */
export interface SealedColumn {
  readonly table: string;
  /** The primary key (single column), used to walk the table in order and to aim each update. */
  readonly idColumn: string;
  /** The primary key's SQL type, e.g. uuid. */
  readonly idType: string;
  readonly column: string;
  /** The column whose text is the value's sealing context (additional authenticated data). */
  readonly contextColumn: string;
}

export interface ResealReport {
  table: string;
  column: string;
  /** Values now sealed with the current key. */
  resealed: number;
  /** Values that changed between read and write (a concurrent write already sealed them anew). */
  changedMeanwhile: number;
  /** Values that open under no key of the keyring: left as they are, and the command fails. */
  unopenable: number;
}

const IDENT = /^[a-z_][a-z0-9_]*$/;

/**
 * Re-seals every value of `column` not yet sealed with the keyring's current key, in batches
 * walked in primary-key order. Each batch is one compare-and-set UPDATE: a value is replaced only
 * if it still holds what was read, so a secret changed meanwhile by the running service is never
 * overwritten with the old one. Interrupted, it can simply run again: values already under the
 * current key are skipped.
 */
export async function resealColumn(
  em: EntityManager,
  sealed: SealedColumn,
  keyring: SecretKeyring,
  batchSize = 500,
): Promise<ResealReport> {
  for (const name of [sealed.table, sealed.idColumn, sealed.idType, sealed.column, sealed.contextColumn]) {
    if (!IDENT.test(name)) throw new Error(`not a plain SQL identifier: ${name}`);
  }
  const { table, idColumn: id, idType, column, contextColumn } = sealed;
  // On the pool, each statement its own transaction, as before, whatever transaction `em` is in.
  const pool = outsideTransaction(em);
  const report: ResealReport = { table, column, resealed: 0, changedMeanwhile: 0, unopenable: 0 };
  const currentPrefix = `v2.${keyring.sealing.id}.`;
  let after: string | null = null;
  for (;;) {
    const rows: { id: string; context: string; sealed: string }[] = await queryRows<{ id: string; context: string; sealed: string }>(
      pool,
      `select "${id}"::text as id, "${contextColumn}"::text as context, "${column}" as sealed
         from "${table}"
        where "${column}" is not null and not starts_with("${column}", ?)
          ${after === null ? '' : `and "${id}" > ?::${idType}`}
        order by "${id}" limit ?`,
      after === null ? [currentPrefix, batchSize] : [currentPrefix, after, batchSize],
    );
    if (rows.length === 0) return report;
    after = rows[rows.length - 1].id;
    const changes: Array<{ id: string; old: string; new: string }> = [];
    for (const row of rows) {
      if (!needsReseal(row.sealed, keyring)) continue;
      try {
        changes.push({ id: row.id, old: row.sealed, new: resealSecret(row.sealed, keyring, row.context) });
      } catch (error) {
        if (!(error instanceof SecretBoxError)) throw error;
        report.unopenable += 1;
      }
    }
    if (changes.length === 0) continue;
    const updated = await queryRows<{ id: string }>(
      pool,
      `update "${table}" as t set "${column}" = v.new
         from json_to_recordset(?::json) as v(id text, old text, new text)
        where t."${id}" = v.id::${idType} and t."${column}" = v.old
        returning t."${id}"::text as id`,
      [JSON.stringify(changes)],
    );
    report.resealed += updated.length;
    report.changedMeanwhile += changes.length - updated.length;
  }
}

/** What a module owning sealed columns exports for `secrets:reseal` (see src/cli.ts). */
export interface SealedSecretOwner {
  resealSecrets(batchSize?: number): Promise<ResealReport[]>;
}
