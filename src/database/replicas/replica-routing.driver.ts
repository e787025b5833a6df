import { PostgreSqlConnection, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { AnyEntity, ConnectionType, EntityData, LoggingOptions, QueryResult, Transaction } from '@mikro-orm/core';
import type { Knex } from '@mikro-orm/knex';
import { chooseReplica, currentRoute } from './read-route';

/**
 * The PostgreSQL driver with the replicas of the ORM's `replicas` option, choosing among them per
 * request instead of at random per statement. The ORM's own choice would send every read outside
 * a transaction to any replica, whatever its lag, in workers and in writes alike; here a replica
 * serves only a request running under a read route (read-route.ts), and only one the monitor
 * found usable. Such a request runs all its statements on its replica, transactions and raw SQL
 * included (the ORM opens both on the "write" connection), so a GET reads one consistent state.
 */
export class ReplicaRoutingDriver extends PostgreSqlDriver {
  private usable: readonly number[] = [];

  // The ORM's "read" or "write" does not decide: a request under a read route reads and writes
  // (transactions included) on its replica, everything else runs on the primary.
  override getConnection(_type: ConnectionType = 'write'): PostgreSqlConnection {
    const replica = chooseReplica(currentRoute(), this.usable);
    return replica === undefined ? super.getConnection('write') : this.replicas[replica];
  }

  /** `em.execute`: the ORM runs it on the primary's connection itself, bypassing getConnection. */
  override execute<T extends QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[] = EntityData<AnyEntity>[]>(
    queryOrKnex: string | Knex.QueryBuilder | Knex.Raw,
    params: unknown[] = [],
    method: 'all' | 'get' | 'run' = 'all',
    ctx?: Transaction,
    loggerContext?: LoggingOptions,
  ): Promise<T> {
    return this.rethrow(this.getConnection().execute<T>(queryOrKnex, params, method, ctx, loggerContext));
  }

  /** The ORM's connections to the replicas, in the order of DATABASE_REPLICA_URLS. */
  replicaConnections(): readonly PostgreSqlConnection[] {
    return this.replicas;
  }

  /** Set by the monitor: the replicas new requests may read. */
  setUsableReplicas(indexes: readonly number[]): void {
    this.usable = indexes;
  }
}
