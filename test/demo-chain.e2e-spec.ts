import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);

describe('npm run demo:chain', () => {
  it('prints the minted balances as the API answers them and the verified webhooks, then removes its database', async () => {
    const { stdout } = await run(process.execPath, [require.resolve('ts-node/dist/bin.js'), '--swc', 'scripts/demo-chain.ts'], {
      env: { ...process.env, NODE_ENV: 'development', DATABASE_URL: process.env.TEST_DATABASE_URL },
      timeout: 90_000,
    });
    const lines = stdout.split('\n');
    const deployed = /^deployed ERC-721 at (0x[0-9a-f]{40}) and ERC-1155 at (0x[0-9a-f]{40})$/.exec(
      lines.find((l) => l.startsWith('deployed')) ?? '',
    );
    expect(deployed).not.toBeNull();
    const [, erc721, erc1155] = deployed!;
    // The balances, as GET /v2/wallets/{walletId}/nft-balances answers them (EIP-55 addresses).
    const balanceAt = lines.indexOf('balance (GET /v2/wallets/{walletId}/nft-balances):');
    expect(balanceAt).toBeGreaterThan(-1);
    const balances = lines.slice(balanceAt + 1, balanceAt + 3).map((l) => l.trim().toLowerCase());
    expect(balances.sort()).toEqual([`${erc1155} #7: 5`, `${erc721} #1: 1`].sort());
    // Every webhook the local receiver verified: the wallet, both tokens, both mints.
    const verified = lines
      .filter((l) => l.startsWith('  ✔ webhook signature verified: '))
      .map((l) => l.split(': ')[1].split(' ').slice(0, 2).join(' '));
    expect(verified.filter((v) => v === 'Transaction create')).toHaveLength(2);
    expect(verified).toContain('Wallet create');
    expect(verified.filter((v) => v === 'Token create')).toHaveLength(2);
    expect(lines).toContain('cleaned up: node, service, database and queues removed');

    const database = /with its own database (\S+) /.exec(stdout)![1];
    const pg = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await pg.connect();
    try {
      expect((await pg.query('select 1 from pg_database where datname = $1', [database])).rowCount).toBe(0);
    } finally {
      await pg.end();
    }
  }, 120_000);
});
