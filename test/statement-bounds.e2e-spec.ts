import { Client, QueryResult } from 'pg';
import { boundStatements } from '../src/database/statement-bounds';
import { TestPgBouncer } from './support/pgbouncer';

let bouncer: TestPgBouncer | null = null;
const BOUNDS = { statementTimeoutMs: 300, idleInTransactionTimeoutMs: 10_000 };

/** A statement the way knex sends it: a config object and a callback. */
function run(client: Client, text: string, values: unknown[] = []): Promise<QueryResult | QueryResult[]> {
  return new Promise((resolve, reject) => {
    (client.query as unknown as (config: object, callback: (error: Error | null, result: QueryResult) => void) => void)(
      { text, values },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}
const rows = async (client: Client, text: string, values: unknown[] = []) => ((await run(client, text, values)) as QueryResult).rows;
const cancelled = { code: '57014' };

/**
 * The bounds a service connection puts on every statement (src/database/statement-bounds.ts),
 * with no session setting: on a direct connection and through a transaction-pooling PgBouncer.
 */
describe.each([
  ['a direct connection', () => process.env.TEST_DATABASE_URL!],
  ['a transaction-pooling PgBouncer', () => bouncer!.urlFor(process.env.TEST_DATABASE_URL!)],
])('statement bounds over %s', (name, url) => {
  let client: Client;

  beforeAll(async () => {
    if (name.includes('PgBouncer')) bouncer = await TestPgBouncer.start();
  });
  afterAll(async () => {
    await bouncer?.stop();
    bouncer = null;
  });
  beforeEach(async () => {
    client = new Client({ connectionString: url() });
    await client.connect();
    boundStatements(client, BOUNDS);
  });
  afterEach(async () => {
    await client.end();
  });

  it('cancels a statement past the bound, with parameters or without, outside a transaction', async () => {
    await expect(run(client, 'select pg_sleep($1)', [2])).rejects.toMatchObject(cancelled);
    await expect(run(client, 'select pg_sleep(2)')).rejects.toMatchObject(cancelled);
    expect(await rows(client, 'select $1::int as n', [7])).toEqual([{ n: 7 }]);
  });

  it('answers exactly what the statement returns: no row or result of the bound itself', async () => {
    expect(await rows(client, 'select current_setting($1) as v', ['statement_timeout'])).toEqual([{ v: '300ms' }]);
    expect(await rows(client, 'select * from generate_series(1, 3) as n')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const several = (await run(client, 'select 1 as a; select 2 as b')) as QueryResult[];
    expect(several.map((r) => r.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
    await expect(run(client, 'select 1/0')).rejects.toMatchObject({ code: '22012' });
    expect(await rows(client, 'select 1 as x')).toEqual([{ x: 1 }]);
  });

  it('bounds a transaction from its begin, isolation level kept, and lets a set local inside it override the bound', async () => {
    await run(client, 'BEGIN TRANSACTION ISOLATION LEVEL SERIALIZABLE;');
    expect(await rows(client, 'show transaction_isolation')).toEqual([{ transaction_isolation: 'serializable' }]);
    expect(await rows(client, 'select current_setting($1) as v', ['idle_in_transaction_session_timeout'])).toEqual([{ v: '10s' }]);
    await expect(run(client, 'select pg_sleep($1)', [2])).rejects.toMatchObject(cancelled);
    await run(client, 'ROLLBACK');

    await run(client, 'BEGIN;');
    await run(client, 'set local statement_timeout = 5000');
    expect(await rows(client, 'select pg_sleep($1)::text as slept, current_setting($2) as v', [0.5, 'statement_timeout'])).toEqual([
      { slept: '', v: '5s' },
    ]);
    await run(client, 'COMMIT;');
  });

  it('leaves no setting on the server session', async () => {
    const other = new Client({ connectionString: url() });
    await other.connect();
    try {
      const initial = (await other.query<{ statement_timeout: string }>('show statement_timeout')).rows[0].statement_timeout;
      expect(await rows(client, 'show statement_timeout')).toEqual([{ statement_timeout: '300ms' }]);
      // A statement not sent through the bounded path sees the session as it was.
      expect((await client.query<{ statement_timeout: string }>('show statement_timeout')).rows[0].statement_timeout).toBe(initial);
    } finally {
      await other.end();
    }
  });
});
