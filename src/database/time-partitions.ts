import type { Knex } from '@mikro-orm/knex';
import { executeScript, queryRows } from './raw-sql';

/**
 * Day partitions of a table partitioned by a UUIDv7 key (the per-webhook history: see the
 * migration TimePartitions). A table's day partitions are named `<table>_pYYYYMMDD` (UTC) and hold
 * the ids made on that day; `<table>_default` holds any other id. The owning module's repository
 * calls these for its own tables.
 */

export const DAY_MS = 86_400_000;
/** How long dropping one partition may wait for its lock before the drop is left to the next pass. */
const DROP_LOCK_TIMEOUT_MS = 1000;
const PARTITION_NAME = /_p(\d{4})(\d{2})(\d{2})$/;

/** The UTC day (midnight) of a moment. */
export function utcDay(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** The day a partition name stands for; null for the default partition or any other name. */
export function partitionDay(name: string): Date | null {
  const match = PARTITION_NAME.exec(name);
  return match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
}

/**
 * The day partitions that retention drops: those whose whole day lies before `before`, oldest
 * first. A day that is partly inside the retention is kept whole until it is entirely outside.
 */
export function expiredPartitions(names: readonly string[], before: Date): string[] {
  return names
    .map((name) => ({ name, day: partitionDay(name) }))
    .filter((p): p is { name: string; day: Date } => p.day !== null && p.day.getTime() + DAY_MS <= before.getTime())
    .sort((a, b) => a.day.getTime() - b.day.getTime())
    .map((p) => p.name);
}

/** Makes the missing day partitions of `table` from `first` to `last` (UTC days); returns how many were made. */
export async function makeDayPartitions(knex: Knex, table: string, first: Date, last: Date): Promise<number> {
  const [row] = await queryRows<{ made: number }>(knex, 'select history_make_partitions(?, ?::date, ?::date) as made', [
    table,
    utcDay(first).toISOString().slice(0, 10),
    utcDay(last).toISOString().slice(0, 10),
  ]);
  return row.made;
}

/** The names of `table`'s partitions (day partitions and the default one). */
async function partitionsOf(knex: Knex, table: string): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(
    knex,
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass`,
    [table],
  );
  return rows.map((r) => r.name);
}

/**
 * Drops `table`'s day partitions that lie wholly before `before`, each in a short transaction of
 * its own: a DROP holds its lock for milliseconds and removes the day at once, where a DELETE
 * would touch every row and leave the space to vacuum. A drop that cannot get its lock within a
 * second (a long read on the table) is left for the next pass. Returns the names dropped;
 * `onDrop` hears how long each drop's transaction, and so its lock, lasted.
 */
export async function dropExpiredPartitions(
  knex: Knex,
  table: string,
  before: Date,
  onDrop?: (name: string, ms: number) => void,
): Promise<string[]> {
  const dropped: string[] = [];
  for (const name of expiredPartitions(await partitionsOf(knex, table), before)) {
    try {
      const started = performance.now();
      await knex.transaction(async (trx) => {
        // Only names read from the catalogue above and matching PARTITION_NAME reach this text.
        await executeScript(trx, `set local lock_timeout = ${DROP_LOCK_TIMEOUT_MS}; drop table "${name}"`);
      });
      onDrop?.(name, performance.now() - started);
      dropped.push(name);
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') break;
      throw error;
    }
  }
  return dropped;
}
