import { ChildProcess, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ERC721_ABI, LocalChain } from './support/evm';
import { followEnv, walletAt } from './support/chain-fixture';
import { sql } from './support/nft';
import { waitUntil } from './support/receiver';
import { freePort, SERVICE_MAIN, startServiceProcess } from './support/service-process';
import { createTestApp, OPERATOR_KEY, testEnv, TestApp } from './support/test-app';

const run = promisify(execFile);

async function stopService(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

describe('Following a chain: start-up against the node', () => {
  let chain: LocalChain;
  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: 31405 });
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it('stops start-up non-zero with one line naming CHAIN_RPC_URLS, the configured id and the node’s id', async () => {
    const error = await run(process.execPath, SERVICE_MAIN, {
      env: { ...process.env, ...testEnv({ PORT: '0', CHAIN_RPC_URLS: `1=${chain.rpcUrl}` }) },
      timeout: 60_000,
    }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(error).not.toBeNull();
    expect(error!.code).toBe(1);
    const lines = error!.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `CHAIN_RPC_URLS: chain 1 is configured at http://127.0.0.1:${chain.port}, but that node reports chain id 31405; correct the chain id or the URL in CHAIN_RPC_URLS`,
    );
  });

  it('ROLE=indexer follows the chain and serves only its probes and metrics', async () => {
    const indexer = await createTestApp({ ...followEnv(chain), ROLE: 'indexer' });
    try {
      await chain.mine(2);
      const head = await chain.blockNumber();
      await waitUntil(
        () =>
          sql<{ applied_block: string | null }>(indexer, 'select "applied_block" from "chain_cursor" where "chain_id" = ?', [
            chain.chainId,
          ]),
        (rows) => Number(rows[0]?.applied_block ?? -1) >= head,
      );
      await indexer.http().get('/health/ready').expect(200);
      // The start-up log names one block, where following begins, and why.
      const said = indexer.logs
        .map((line) => (JSON.parse(line) as { msg?: string }).msg ?? '')
        .filter((msg) => msg.includes('holding chain'));
      expect(said.slice(0, 2)).toEqual([
        `holding chain ${chain.chainId}; first start on this chain`,
        `holding chain ${chain.chainId}; following from block 0 (CHAIN_START_BLOCK)`,
      ]);
      expect((await indexer.http().get('/metrics').expect(200)).text).toContain(`chain_applied_block{chainId="${chain.chainId}"}`);
      expectProblem(await indexer.http().get('/v1/wallets').set(bearer(OPERATOR_KEY)), 404, 'ROUTE_NOT_FOUND');
      expectProblem(await indexer.http().get('/admin/v1/chains').set(bearer(OPERATOR_KEY)), 404, 'ROUTE_NOT_FOUND');
    } finally {
      await indexer.close();
    }
  });

  it('starts with a node that cannot be reached: ready, serving, and the chain shows the error', async () => {
    const port = await freePort();
    const closed = await freePort();
    let service: ChildProcess | null = null;
    try {
      service = await startServiceProcess(
        testEnv({ PORT: String(port), ROLE: 'all', CHAIN_RPC_URLS: `31499=http://127.0.0.1:${closed}`, CHAIN_POLL_INTERVAL_MS: '100' }),
      );
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
      const figures = await waitUntil(
        async () => {
          const res = await fetch(`${base}/admin/v1/chains`, { headers: bearer(OPERATOR_KEY) });
          return (await res.json()) as { chains: { chainId: number; appliedBlock: number | null; lastError: string | null }[] };
        },
        (body) => body.chains[0]?.lastError !== null,
      );
      expect(figures.chains).toEqual([
        { chainId: 31499, headBlock: null, appliedBlock: null, lagBlocks: null, lagSeconds: null, lastError: expect.any(String) },
      ]);
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    } finally {
      await stopService(service);
    }
  });
});

// Two indexer processes follow the same chain: one holds it, the other stands by. The holder is
// SIGKILLed in the middle of a backlog; the other takes over once the lease lapses and finishes,
// and every movement is recorded exactly once (rows, balances and webhooks).
describe('Following a chain: an indexer killed mid-range', () => {
  const CHAIN_ID = 31407;
  let chain: LocalChain;
  let api: TestApp;
  let org: TestOrganization;
  const services: ChildProcess[] = [];

  beforeAll(async () => {
    chain = await LocalChain.start({ chainId: CHAIN_ID });
    api = await createTestApp({ ROLE: 'api' });
    org = await createOrganization(api);
  });
  afterAll(async () => {
    for (const s of services) await stopService(s);
    await api?.close();
    await chain?.stop();
  });

  it('loses and doubles nothing: the standby takes over within 30 s and resumes at the cursor', async () => {
    const holders = chain.accounts.slice(1, 9);
    const wallets = await Promise.all(holders.map((a, i) => walletAt(api, org, a, `holder ${i}`)));
    const nft = await chain.deployErc721();
    // 100 blocks of 16 mints each, then 16 blocks in which each holder passes 5 tokens on.
    const MINT_BLOCKS = 100;
    for (let b = 0; b < MINT_BLOCKS; b++) await chain.write(nft, ERC721_ABI, 'mintMany', [[...holders, ...holders], BigInt(b * 16)]);
    let transfers = 0;
    for (let round = 0; round < 2; round++) {
      for (let h = 0; h < holders.length; h++) {
        // Token b*16 + h (and + 8) belongs to holder h; each pass takes 5 of them from their block.
        const ids = Array.from({ length: 5 }, (_, k) => BigInt((round * 5 + k) * 16 + h));
        const next = holders[(h + 1) % holders.length];
        await chain.write(nft, ERC721_ABI, 'transferMany', [ids.map(() => holders[h]), ids.map(() => next), ids], holders[h]);
        transfers += 5;
      }
    }
    const head = await chain.blockNumber();
    const expected = MINT_BLOCKS * 16 + transfers;

    const env = testEnv({
      ...followEnv(chain, { CHAIN_MAX_BLOCK_RANGE: '1' }),
      ROLE: 'indexer',
      PORT: '0',
    });
    const [first, second] = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
    services.push(first, second);
    const cursor = () =>
      sql<{ applied_block: string | null; lease_owner: string | null }>(
        api,
        'select "applied_block", "lease_owner" from "chain_cursor" where "chain_id" = ?',
        [CHAIN_ID],
      );

    // Kill the holder once it is well into the backlog.
    const during = await waitUntil(cursor, (rows) => Number(rows[0]?.applied_block ?? -1) >= 20, 60_000);
    const holderPid = Number(during[0].lease_owner!.split(':')[1]);
    const holder = [first, second].find((s) => s.pid === holderPid)!;
    const standby = [first, second].find((s) => s.pid !== holderPid)!;
    expect(holder).toBeDefined();
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    const [atKill] = await cursor();
    expect(Number(atKill.applied_block)).toBeLessThan(head);

    // The lease lapses (15 s) and the standby takes the chain over.
    const after = await waitUntil(cursor, (rows) => rows[0].lease_owner !== during[0].lease_owner && rows[0].lease_owner !== null, 30_000);
    expect(Number(after[0].lease_owner!.split(':')[1])).toBe(standby.pid);
    await waitUntil(cursor, (rows) => Number(rows[0].applied_block) === head, 60_000);

    const [counts] = await sql<{ rows: string; distinct_keys: string; events: string }>(
      api,
      `select count(*)::text as "rows",
              count(distinct ("transaction_hash", "log_index", coalesce("batch_index", -1)))::text as "distinct_keys",
              (select count(*) from "domain_event" e where e."organization_id" = ? and e."resource_type" = 'Transaction' and e."action" = 'create')::text as "events"
         from "nft_transaction" where "organization_id" = ? and "chain_id" = ? and "status" = 'confirmed'`,
      [org.id, org.id, CHAIN_ID],
    );
    expect(counts).toEqual({ rows: String(expected), distinct_keys: String(expected), events: String(expected) });
    // Every holder minted 200 tokens, passed 10 on and received 10.
    for (const walletId of wallets) {
      const held = await sql<{ n: string }>(api, `select coalesce(sum("amount"), 0)::text as n from "balance" where "wallet_id" = ?`, [
        walletId,
      ]);
      expect(held[0].n).toBe('200');
    }
  }, 180_000);
});
