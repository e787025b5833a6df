import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createNftWalletClient, type NftWalletClient } from '../clients/typescript/src';
import { createOrganization } from './support/factories';
import { nftApi, UNKNOWN_ID } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');

/**
 * The typed client of clients/typescript against the running service, over real HTTP: the read
 * path an integrator starts with (wallets, NFT balances, tokens), answers and errors as typed.
 */
describe('typed TypeScript client', () => {
  let t: TestApp;
  let client: NftWalletClient;
  let ids: { walletId: string; tokenId: string; contractAddress: string };
  let baseUrl: string;
  let adminKey: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    const org = await createOrganization(t);
    const api = nftApi(t, org.adminKey);
    const wallet = await api.wallet({ name: 'client wallet' });
    const token = await api.token({ metadata: { name: 'Client token' } });
    await api.mint(token.id, wallet.id, '3');
    ids = { walletId: wallet.id, tokenId: token.id, contractAddress: token.contractAddress };
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    adminKey = org.adminKey;
    client = createNftWalletClient({ baseUrl: `${baseUrl}/`, apiKey: org.adminKey });
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists and reads wallets', async () => {
    const list = await client.GET('/v1/wallets', { params: { query: { pageSize: 10 } } });
    expect(list.response.status).toBe(200);
    expect(list.data?.wallets.map((w) => w.id)).toEqual([ids.walletId]);
    expect(list.data?.nextPageKey).toBeNull();

    const one = await client.GET('/v1/wallets/{walletId}', { params: { path: { walletId: ids.walletId } } });
    expect(one.data).toEqual(expect.objectContaining({ id: ids.walletId, name: 'client wallet', address: null }));
  });

  it('reads NFT balances and tokens', async () => {
    const balances = await client.GET('/v2/wallets/{walletId}/nft-balances', { params: { path: { walletId: ids.walletId } } });
    expect(balances.response.status).toBe(200);
    expect(balances.data?.nftTokenBalances.map((b) => [b.tokenId, b.amount])).toEqual([[ids.tokenId, '3']]);

    const token = await client.GET('/v1/tokens/{tokenId}', { params: { path: { tokenId: ids.tokenId } } });
    expect(token.data?.id).toBe(ids.tokenId);
    expect(token.data?.contractAddress.toLowerCase()).toBe(ids.contractAddress.toLowerCase());
  });

  it('gives documented errors as problem details', async () => {
    const missing = await client.GET('/v1/wallets/{walletId}', { params: { path: { walletId: UNKNOWN_ID } } });
    expect(missing.response.status).toBe(404);
    expect(missing.data).toBeUndefined();
    expect(missing.error).toEqual(expect.objectContaining({ status: 404, code: 'WALLET_NOT_FOUND' }));

    const badPage = await client.GET('/v1/wallets', { params: { query: { pageKey: 'not-a-page-key' } } });
    expect(badPage.error?.code).toBe('INVALID_PAGE_KEY');
  });

  it("README's snippet, pasted into a fresh CommonJS project that installed the packed client, compiles and lists the wallets", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-project-'));
    try {
      // As README says: npm pack in clients/typescript (which builds it), npm install of the tarball.
      await run('npm', ['pack', '--pack-destination', dir], { cwd: join(ROOT, 'clients/typescript'), timeout: 120_000 });
      const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'))!;
      const project = join(dir, 'project');
      await run('mkdir', [project]);
      await run('npm', ['init', '-y'], { cwd: project, timeout: 30_000 });
      expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).type ?? 'commonjs').toBe('commonjs');
      // openapi-fetch from this checkout rather than the registry: the test runs offline.
      const openapiFetch = dirname(require.resolve('openapi-fetch/package.json'));
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', openapiFetch, join(dir, tarball)], {
        cwd: project,
        timeout: 120_000,
      });

      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const snippet = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('createNftWalletClient'));
      expect(snippet).toBeDefined();
      // The one change: the address of this test's service instead of localhost:3000.
      writeFileSync(join(project, 'index.ts'), snippet!.replace('http://localhost:3000', baseUrl));
      const tsc = require.resolve('typescript/bin/tsc');
      await run(
        process.execPath,
        [
          tsc,
          '--strict',
          '--module',
          'commonjs',
          '--target',
          'es2022',
          '--types',
          'node',
          '--typeRoots',
          join(ROOT, 'node_modules/@types'),
          'index.ts',
        ],
        { cwd: project, timeout: 120_000 },
      );
      const { stdout } = await run(process.execPath, ['index.js'], {
        cwd: project,
        env: { ...process.env, API_KEY: adminKey },
        timeout: 30_000,
      });
      expect(stdout).toContain(`id: '${ids.walletId}'`);
      expect(stdout).toContain("name: 'client wallet'");
      expect(stdout.trim().endsWith('null')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
