import type { Client } from 'pg';
import { median, round } from './bench-kit';

/** What one burst measured (bench/webhook-cpu.ts measureCpu). */
interface Measured {
  deliveriesPerSecond: number;
  cpuMsPerWebhook: number;
  latencyP99Ms: number;
}

export interface ReceiverChoicesInput {
  db: Client;
  organizationId: string;
  /** Events per burst; each becomes one webhook per endpoint. */
  events: number;
  /** The default endpoint's id (the organization's) and the two others of the fan-out. */
  endpointIds: string[];
  patchEndpoint: (endpointId: string, body: object) => Promise<unknown>;
  /** One measured burst of the events that `insertSql` commits ($1 = the organization). */
  measure: (insertSql: string) => Promise<Measured>;
  /** An unmeasured burst and a vacuum, as before every measured configuration. */
  warmUp: () => Promise<void>;
  uuid7Sql: (ms: string, salt: string) => string;
  log: (line: string) => void;
}

/**
 * A filter of exactly 20 nodes (object keys plus array elements) that every event of the burst
 * matches, reaching into `data` as filters on a resource do: the engine reads each event's
 * transaction and matches it, and every webhook is still sent, so throughput compares like for like.
 */
export const TWENTY_NODE_FILTER = {
  resourceType: 'Transaction',
  webhookType: 'transaction',
  action: { $in: ['create', 'update'] },
  data: { status: { $neq: 'reverted' }, amount: { $in: ['1', '2'] }, type: { $startsWith: 'nft' } },
  $or: [{ changes: null }, { webhookType: 'transaction' }],
};

/** Object keys plus array elements, as the service counts a filter's size. */
export function filterNodes(value: unknown): number {
  if (Array.isArray(value)) return value.length + value.reduce<number>((sum, item) => sum + filterNodes(item), 0);
  if (value !== null && typeof value === 'object') {
    return Object.values(value).reduce<number>((sum, item) => sum + 1 + filterNodes(item), 0);
  }
  return 0;
}

/** The three configurations compared, each as the PATCHes that set it from thin and unfiltered and back. */
type Configuration = 'thin' | 'filter' | 'full';

/**
 * The fan-out burst (events × 3 endpoints) about real transactions, three ways: thin bodies and
 * no filter; a 20-node filter on both endpoints that can have one (the default endpoint cannot);
 * full bodies on all three. Goals: the filter costs at most 10 % of the thin burst's throughput,
 * full bodies at most 15 %.
 *
 * One burst of each is not enough to compare them: the same burst repeated varies by a factor of
 * two and more on this machine (PostgreSQL's autovacuum and checkpoints catch up inside it, and
 * other work shares the two cores), far more than the difference measured. So `rounds` rounds run
 * each configuration once, in an order that rotates from round to round (no configuration always
 * comes first after the warm-up), and each configuration's figure is the median of its rounds.
 */
export async function receiverChoicesScenario(input: ReceiverChoicesInput, rounds = 3) {
  const { events, endpointIds, log } = input;
  const nodes = filterNodes(TWENTY_NODE_FILTER);
  if (nodes !== 20) throw new Error(`the bench filter has ${nodes} nodes, not 20`);
  log(`receiver choices: seeding ${events} transactions for full bodies and filters to read`);
  await seedTransactions(input);
  const insertSql = `insert into "domain_event" ("id", "created_at", "organization_id", "webhook_type", "resource_type", "resource_id", "action", "changes")
     select ${input.uuid7Sql('(extract(epoch from clock_timestamp()) * 1000)::bigint', 'random()::text || t.id')}, clock_timestamp(), $1,
            'transaction', 'Transaction', t.id, 'create', null
       from (select "id" from "nft_transaction" where "organization_id" = $1 and "source" = 'api' limit ${events}) t`;
  const others = endpointIds.slice(1);
  const set: Record<Configuration, () => Promise<void>> = {
    thin: async () => {},
    filter: async () => {
      for (const id of others) await input.patchEndpoint(id, { filter: TWENTY_NODE_FILTER });
    },
    full: async () => {
      for (const id of endpointIds) await input.patchEndpoint(id, { payload: 'full' });
    },
  };
  const unset: Record<Configuration, () => Promise<void>> = {
    thin: async () => {},
    filter: async () => {
      for (const id of others) await input.patchEndpoint(id, { filter: null });
    },
    full: async () => {
      for (const id of endpointIds) await input.patchEndpoint(id, { payload: 'thin' });
    },
  };
  const labels: Record<Configuration, string> = {
    thin: 'thin, no filter',
    filter: 'a 20-node filter on both other endpoints',
    full: 'full bodies on all three',
  };

  log(`receiver choices: ${events} events about real transactions to 3 endpoints, one worker, ${rounds} rotated rounds`);
  const order: Configuration[] = ['thin', 'filter', 'full'];
  const measured: Record<Configuration, Measured[]> = { thin: [], filter: [], full: [] };
  for (let r = 0; r < rounds; r++) {
    for (const configuration of [...order.slice(r % 3), ...order.slice(0, r % 3)]) {
      await set[configuration]();
      await input.warmUp();
      const m = await input.measure(insertSql);
      await unset[configuration]();
      measured[configuration].push(m);
      log(
        `  round ${r + 1}, ${labels[configuration]}: ${m.deliveriesPerSecond} webhooks/s, ${m.cpuMsPerWebhook} CPU ms per webhook, p99 ${m.latencyP99Ms} ms`,
      );
    }
  }

  const summary = (configuration: Configuration) => {
    const runs = measured[configuration];
    return {
      deliveriesPerSecond: round(median(runs.map((m) => m.deliveriesPerSecond)), 1),
      cpuMsPerWebhook: round(median(runs.map((m) => m.cpuMsPerWebhook)), 3),
      latencyP99Ms: round(median(runs.map((m) => m.latencyP99Ms)), 0),
      rounds: runs.map((m) => ({ deliveriesPerSecond: m.deliveriesPerSecond, cpuMsPerWebhook: m.cpuMsPerWebhook })),
    };
  };
  const thin = summary('thin');
  const compared = (configuration: Configuration, goal: number) => {
    const s = summary(configuration);
    return {
      ...s,
      throughputRatio: round(s.deliveriesPerSecond / thin.deliveriesPerSecond, 3),
      cpuRatio: round(s.cpuMsPerWebhook / thin.cpuMsPerWebhook, 3),
      goal,
    };
  };
  return {
    events,
    endpoints: endpointIds.length,
    rounds,
    thin,
    filter: { nodes, ...compared('filter', 0.9) },
    full: compared('full', 0.85),
  };
}

/** A wallet, a token and `events` API mints of it, written straight to the tables like the other seeds. */
async function seedTransactions({ db, organizationId, events, uuid7Sql }: ReceiverChoicesInput): Promise<void> {
  const existing = await db.query(`select count(*)::int as n from "nft_transaction" where "organization_id" = $1 and "source" = 'api'`, [
    organizationId,
  ]);
  if ((existing.rows[0] as { n: number }).n >= events) return;
  const now = Date.now();
  await db.query(
    `with w as (
       insert into "wallet" ("id", "created_at", "organization_id", "name") values (${uuid7Sql(`${now}::bigint`, `'choices-wallet'`)}, now(), $1, 'choices')
       returning "id"),
     t as (
       insert into "token" ("id", "created_at", "organization_id", "contract_address", "blockchain_token_id")
       values (${uuid7Sql(`${now}::bigint`, `'choices-token'`)}, now(), $1, '0x' || substr(md5('choices') || md5('choices-2'), 1, 40), '1')
       returning "id")
     insert into "nft_transaction" ("id", "created_at", "organization_id", "type", "token_id", "to_wallet_id", "amount", "source", "status")
     select ${uuid7Sql(`${now}::bigint + i`, `'choices-tx-' || i`)}, now(), $1, 'nftMint', t."id", w."id", 1, 'api', 'confirmed'
       from generate_series(1, ${events}) i, w, t`,
    [organizationId],
  );
  await db.query('vacuum analyze "nft_transaction"');
}
