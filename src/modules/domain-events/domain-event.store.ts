import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from 'knex';
import { execute, outsideTransaction, queryRows } from '../../database/raw-sql';
import { makeDayPartitions, dropExpiredPartitions } from '../../database/time-partitions';

/**
 * "Not judged yet", for statements that already name their rows by id. Written so that it does
 * not match the partial index on unjudged events: with `processed_at is null` the planner ANDs
 * that index with the primary key, and reads the whole backlog's index on every call (three
 * quarters of the database's time per webhook under a backlog). The id list alone is a handful of
 * primary-key probes.
 */
const UNJUDGED = `coalesce(processed_at, '-infinity') = '-infinity'`;

/** An event nobody has judged yet (its creation time as PostgreSQL text, to keep microseconds). */
export interface UnjudgedEvent {
  id: string;
  organizationId: string;
  webhookType: string;
  resourceType: string;
  resourceId: string;
  action: string;
  changes: Record<string, unknown> | null;
  /** The contract of the token the event is about (lowercase), for endpoint filters. */
  contractAddress: string | null;
  /** The W3C traceparent of the request that wrote the event; null when it was not traced. */
  traceparent: string | null;
  createdAt: string;
}

/** An event claimed for relaying. */
export interface RelayedEvent {
  id: string;
  organizationId: string;
  /** The W3C traceparent of the request that wrote the event; null when it was not traced. */
  traceparent: string | null;
}

interface PendingRow {
  id: string;
  organization_id: string;
  webhook_type: string;
  resource_type: string;
  resource_id: string;
  action: string;
  changes: Record<string, unknown> | null;
  contract_address: string | null;
  traceparent: string | null;
  created_at: string;
}

/**
 * Every statement other modules may run on `domain_event`, by name: reading events to deliver
 * them, writing their relayed/processed marks, pruning them and measuring the lag. This module
 * owns the table; the webhook engine's outbox decides when each statement runs. Statements take
 * many ids at once so the worker pays per batch, not per event.
 */
@Injectable()
export class DomainEventStore {
  constructor(private readonly em: EntityManager) {}

  private get pool(): Knex {
    return outsideTransaction(this.em);
  }

  /**
   * Sends `payload` on the channel committed events are announced on, through the service's own
   * pool (DATABASE_URL), the way the events' trigger does: lets a listener check that what is
   * announced there reaches it.
   */
  async announce(payload: string): Promise<void> {
    await execute(this.pool, `select pg_notify('domain_event', ?)`, [payload]);
  }

  /**
   * Up to `limit` committed events not yet relayed, oldest first, locked in the caller's
   * transaction (FOR UPDATE SKIP LOCKED, so relays on several workers never take the same rows).
   */
  async claimUnrelayed(trx: Knex.Transaction, limit: number): Promise<RelayedEvent[]> {
    const claimed = await queryRows<{ id: string; organization_id: string; traceparent: string | null }>(
      trx,
      `select id, organization_id, traceparent from domain_event where relayed_at is null order by created_at limit ? for update skip locked`,
      [limit],
    );
    return claimed.map((r) => ({ id: r.id, organizationId: r.organization_id, traceparent: r.traceparent }));
  }

  /** Marks events relayed, in the caller's transaction (the one that claimed them). */
  async markRelayed(trx: Knex.Transaction, ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await execute(trx, `update domain_event set relayed_at = ? where id = any(?::uuid[])`, [at, [...ids]]);
  }

  /** The events among `ids` that nobody has judged yet. */
  async unjudged(ids: readonly string[]): Promise<Map<string, UnjudgedEvent>> {
    const out = new Map<string, UnjudgedEvent>();
    if (ids.length === 0) return out;
    const rows = await queryRows<PendingRow>(
      this.pool,
      `select id, organization_id, webhook_type, resource_type, resource_id, action, changes, contract_address, traceparent, created_at
         from domain_event where id = any(?::uuid[]) and ${UNJUDGED}`,
      [[...ids]],
    );
    for (const r of rows) {
      out.set(r.id, {
        id: r.id,
        organizationId: r.organization_id,
        webhookType: r.webhook_type,
        resourceType: r.resource_type,
        resourceId: r.resource_id,
        action: r.action,
        changes: r.changes,
        contractAddress: r.contract_address,
        traceparent: r.traceparent,
        createdAt: r.created_at,
      });
    }
    return out;
  }

  /**
   * The events among `events` that an older event of the same resource (same organization,
   * earlier by time then id) still unjudged comes before, leaving out the events given: those are
   * judged together. Webhooks numbered in event order wait for these.
   */
  async olderUnjudged(events: readonly Pick<UnjudgedEvent, 'id' | 'organizationId' | 'resourceId' | 'createdAt'>[]): Promise<Set<string>> {
    if (events.length === 0) return new Set();
    const ids = events.map((e) => e.id);
    const rows = await queryRows<{ id: string }>(
      this.pool,
      `select e.id from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::timestamptz[]) as e(id, organization_id, resource_id, created_at)
        where exists (
          select 1 from domain_event o
           where o.organization_id = e.organization_id and o.resource_id = e.resource_id and o.processed_at is null
             and (o.created_at, o.id) < (e.created_at, e.id) and o.id <> all(?::uuid[]))`,
      [ids, events.map((e) => e.organizationId), events.map((e) => e.resourceId), events.map((e) => e.createdAt), ids] as never[],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Marks events judged, in the caller's transaction so that the deliveries judged from them
   * commit with the mark. Returns the ids this call marked: an id judged by someone else in the
   * meantime is not among them (the row lock makes a concurrent judge wait, then find it done).
   */
  async markProcessed(trx: Knex.Transaction, ids: readonly string[], at: Date): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await queryRows<{ id: string }>(
      trx,
      `update domain_event set processed_at = ? where id = any(?::uuid[]) and ${UNJUDGED} returning id`,
      [at, [...ids]],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Relayed events still unjudged past `cutoff` (their job was lost), oldest first but at most
   * `perOrganization` from each organization, so one organization's backlog cannot starve the
   * others' recovery.
   */
  async stuck(cutoff: Date, limit: number, perOrganization: number): Promise<{ id: string; organizationId: string }[]> {
    const rows = await queryRows<{ id: string; organization_id: string }>(
      this.pool,
      `select id, organization_id from (
         select id, organization_id, created_at,
                row_number() over (partition by organization_id order by created_at) as n
           from domain_event
          where processed_at is null and relayed_at is not null and created_at < ?
       ) s where n <= ? order by n, created_at limit ?`,
      [cutoff, perOrganization, limit],
    );
    return rows.map((r) => ({ id: r.id, organizationId: r.organization_id }));
  }

  /** Makes the day partitions of events from `first` to `last` (UTC days). */
  async makePartitions(first: Date, last: Date): Promise<void> {
    await makeDayPartitions(this.pool, 'domain_event', first, last);
  }

  /**
   * Retention: drops the days of events made before `before` as whole partitions, and deletes
   * judged events outside the day partitions (as the webhooks' history is pruned), `batch` per
   * statement. Returns the partitions dropped and the rows deleted.
   */
  async prune(before: Date, batch: number, onDrop?: (name: string, ms: number) => void): Promise<{ partitions: string[]; rows: number }> {
    const partitions = await dropExpiredPartitions(this.pool, 'domain_event', before, onDrop);
    let rows = 0;
    for (;;) {
      const deleted = await execute(
        this.pool,
        `delete from domain_event_default where id in (
           select id from domain_event_default where processed_at is not null and created_at < ? order by id limit ?)`,
        [before, batch],
      );
      rows += deleted;
      if (deleted < batch) return { partitions, rows };
    }
  }

  /** Seconds since the oldest event not yet judged was committed (0 when none). */
  async lagSeconds(): Promise<number> {
    const [row] = await queryRows<{ oldest: Date | null }>(
      this.pool,
      `select min(created_at) as oldest from domain_event where processed_at is null`,
    );
    const oldest = row?.oldest;
    return oldest ? Math.max(0, (Date.now() - new Date(oldest).getTime()) / 1000) : 0;
  }
}
