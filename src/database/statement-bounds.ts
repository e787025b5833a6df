import type { EntityManager } from '@mikro-orm/postgresql';
import { Query, type Client, type QueryConfig } from 'pg';
import type { AppConfig } from '../config/app-config';
import { executeScript } from './raw-sql';

/** The server-side bounds every statement of a service connection carries. */
export interface StatementBounds {
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/** The part of pg's wire connection a query writes its messages to. */
interface WireConnection {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[] }): void;
  execute(message: { portal: string; rows: number }): void;
  prependListener(event: 'readyForQuery', listener: (message: { status: string }) => void): void;
}

/** The members of pg's Query that a bounded query extends (pg has no types for them). */
interface QueryInternals {
  text: string;
  submit(connection: WireConnection): Error | null;
  requiresPreparation(): boolean;
  prepare(connection: WireConnection): void;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: WireConnection): void;
}

const BaseQuery = Query as unknown as new (config: QueryConfig, values: undefined, callback: unknown) => QueryInternals;

/** Statements that open a transaction: their bounds are set right after them, inside it. */
const TRANSACTION_START = /^\s*(begin|start\s+transaction)\b/i;

/** Whether the connection's server session is inside a transaction block (ReadyForQuery status). */
interface SessionState {
  inTransaction: boolean;
}

/**
 * A query whose statement runs under the connection's bounds, set with `set_config(..., true)`
 * (SET LOCAL) in the same flight of messages as the statement: no round trip of its own, and
 * nothing left on the server session afterwards. A session setting would not do behind a
 * transaction-pooling PgBouncer, which hands each transaction to whichever server connection is
 * free (and refuses `statement_timeout` as a start-up parameter).
 *
 * - Outside a transaction, the setting statement runs first in the statement's implicit
 *   transaction: for a parameterised statement as one more Parse/Bind/Execute before the
 *   statement's own, under the same Sync; for a plain text statement as the first of a
 *   multi-statement query. PostgreSQL starts the statement timer afresh for each statement.
 * - `begin` is followed by the setting statement, so the bounds last the whole transaction and a
 *   `set local statement_timeout` issued inside it by the code still overrides them.
 * - Inside a transaction nothing is added: the bounds were set at its start.
 *
 * The setting statement's own messages are left out of the result.
 */
class BoundedQuery extends BaseQuery {
  /** Messages of the setting statement still to be left out of the result. */
  private skipping: 'before' | 'after' | null = null;
  private completed = 0;

  constructor(
    config: QueryConfig,
    callback: unknown,
    private readonly setting: string,
    private readonly session: SessionState,
  ) {
    super(config, undefined, callback);
  }

  submit(connection: WireConnection): Error | null {
    if (!this.session.inTransaction) {
      if (TRANSACTION_START.test(this.text) && !this.requiresPreparation()) {
        this.skipping = 'after';
        this.text = `${this.text.trim().replace(/;+$/, '')}; ${this.setting}`;
      } else {
        this.skipping = 'before';
        if (!this.requiresPreparation()) this.text = `${this.setting}; ${this.text}`;
      }
    }
    return super.submit(connection);
  }

  prepare(connection: WireConnection): void {
    if (this.skipping === 'before') {
      // Unnamed statement and portal, no Describe: the statement's own Parse replaces them.
      connection.parse({ text: this.setting, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.execute({ portal: '', rows: 0 });
    }
    super.prepare(connection);
  }

  /** Whether a message belongs to the setting statement (which completes once). */
  private settingOwns(): boolean {
    if (this.skipping === 'before') return this.completed === 0;
    if (this.skipping === 'after') return this.completed >= 1;
    return false;
  }

  handleRowDescription(message: unknown): void {
    if (!this.settingOwns()) super.handleRowDescription(message);
  }

  handleDataRow(message: unknown): void {
    if (!this.settingOwns()) super.handleDataRow(message);
  }

  handleCommandComplete(message: unknown, connection: WireConnection): void {
    const owned = this.settingOwns();
    this.completed += 1;
    if (!owned) super.handleCommandComplete(message, connection);
  }
}

/** The statement that sets the bounds for the current transaction only. */
function boundsSetting(bounds: StatementBounds): string {
  const ms = (value: number) => `'${Math.max(0, Math.round(value))}ms'`;
  return (
    `select set_config('statement_timeout', ${ms(bounds.statementTimeoutMs)}, true), ` +
    `set_config('idle_in_transaction_session_timeout', ${ms(bounds.idleInTransactionTimeoutMs)}, true)`
  );
}

/**
 * Makes every statement `client` runs carry `bounds` (see BoundedQuery). Meant for knex's
 * `afterCreate` pool hook: it applies once per connection, and costs no round trip per query.
 */
export function boundStatements(client: Client, bounds: StatementBounds): void {
  const setting = boundsSetting(bounds);
  const session: SessionState = { inTransaction: false };
  // Prepended so the state is current before pg submits the next queued query from its own
  // ReadyForQuery handler.
  (client as unknown as { connection: WireConnection }).connection.prependListener('readyForQuery', (message) => {
    session.inTransaction = message.status !== 'I';
  });
  const query = client.query.bind(client) as (config: unknown, values?: unknown, callback?: unknown) => unknown;
  const bounded = (config: unknown, values?: unknown, callback?: unknown): unknown => {
    // Knex passes {text, values} and a callback; anything else (streams, prepared statements
    // by name, promise style) goes through untouched.
    const plain =
      typeof config === 'object' &&
      config !== null &&
      typeof (config as { submit?: unknown }).submit !== 'function' &&
      typeof (config as QueryConfig).text === 'string' &&
      !(config as QueryConfig).name &&
      typeof values === 'function' &&
      callback === undefined;
    if (!plain) return query(config, values, callback);
    return query(new BoundedQuery(config as QueryConfig, values, setting, session));
  };
  (client as unknown as { query: typeof bounded }).query = bounded;
}

/**
 * A transaction of background work (a chain step, a wallet replay's range) on a fork of `em`,
 * whose statements are bounded by DB_WORKER_STATEMENT_TIMEOUT: in a process that also serves the
 * API (ROLE=all) the pool's bound is the API's, too short for a step's set-based writes over a
 * whole range, while a worker's statement must still never wait for ever.
 */
export function workerTransaction<T>(
  em: EntityManager,
  config: Pick<AppConfig, 'db'>,
  work: (em: EntityManager) => Promise<T>,
): Promise<T> {
  return em.fork().transactional(async (tx) => {
    await executeScript(tx, `set local statement_timeout = ${Math.round(config.db.workerStatementTimeoutMs)}`);
    return work(tx);
  });
}
