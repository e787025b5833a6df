import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Abi,
  Address,
  Chain,
  Hash,
  Hex,
  PublicClient,
  TestClient,
  TransactionReceipt,
  Transport,
  WalletClient,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
} from 'viem';
import { foundry } from 'viem/chains';
import erc1155Artifact from './contracts/TestERC1155.json';
import erc20Artifact from './contracts/TestERC20.json';
import erc721Artifact from './contracts/TestERC721.json';

/**
 * A local EVM node for tests and benches: anvil from the `@foundry-rs/anvil` npm package (its
 * binary ships inside the platform package, nothing is downloaded at run time), the compiled test
 * contracts of contracts/*.sol (test/support/contracts/*.json, see `npm run contracts:compile`),
 * and viem clients bound to it.
 *
 *   const chain = await LocalChain.start();
 *   afterAll(() => chain.stop());
 *   const nft = await chain.deployErc721();
 *   await chain.write(nft, ERC721_ABI, 'mint', [to, 1n]);
 */

export interface ContractArtifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
}

export const ERC721: ContractArtifact = erc721Artifact as ContractArtifact;
export const ERC1155: ContractArtifact = erc1155Artifact as ContractArtifact;
export const ERC20: ContractArtifact = erc20Artifact as ContractArtifact;
export const ERC721_ABI = ERC721.abi;
export const ERC1155_ABI = ERC1155.abi;
export const ERC20_ABI = ERC20.abi;

export const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

export const ANVIL_BINARY = join(__dirname, '../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil');

export interface LocalChainOptions {
  /** Default 31337 (anvil's own). */
  chainId?: number;
  /**
   * Interval mining: a block every this many seconds (fractions allowed), on top of automine
   * unless `automine: false`. Unset: automine only (one block per transaction).
   */
  blockTimeSeconds?: number;
  /** Default true: every transaction is mined at once in its own block. */
  automine?: boolean;
  /** Number of unlocked dev accounts (default 10, each with 10,000 ETH). */
  accounts?: number;
  /** The block gas limit, which also bounds an eth_call (anvil's default: 30,000,000). */
  gasLimit?: number;
}

/** Every node started by this process, killed on exit even if a suite forgets its afterAll. */
/**
 * Each running node with the home directory it was given. anvil moves the states of older blocks
 * to files under $HOME/.foundry/anvil/tmp and removes them only when it exits cleanly; every node
 * here is killed, so each gets a home of its own, removed with it (a suite mining thousands of
 * blocks otherwise leaves gigabytes behind on every run).
 */
const running = new Map<ChildProcess, string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [child, home] of running) {
      child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(2000),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

export class LocalChain {
  readonly publicClient: PublicClient<Transport, Chain>;
  readonly walletClient: WalletClient<Transport, Chain>;
  readonly testClient: TestClient<'anvil', Transport, Chain>;
  /** The unlocked dev accounts (EIP-55); the first one sends by default. */
  accounts: Address[] = [];
  private stopped = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly rpcUrl: string,
    readonly chainId: number,
    readonly port: number,
  ) {
    const chain = defineChain({ ...foundry, id: chainId, rpcUrls: { default: { http: [rpcUrl] } } });
    // A short polling interval: a local node answers at once, viem's default (4 s) would only wait.
    const transport = http(rpcUrl, { batch: false, retryCount: 0 });
    this.publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
    this.walletClient = createWalletClient({ chain, transport, pollingInterval: 50 });
    this.testClient = createTestClient({ mode: 'anvil', chain, transport, pollingInterval: 50 });
  }

  /** Starts anvil on a free loopback port and waits until it answers JSON-RPC. */
  static async start(options: LocalChainOptions = {}): Promise<LocalChain> {
    installExitHook();
    const chainId = options.chainId ?? 31337;
    let lastError: unknown;
    // The free port is probed, then handed to anvil: another process may take it in between, so
    // a node that dies at start-up is retried on a new port.
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort();
      const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--quiet'];
      if (options.accounts !== undefined) args.push('--accounts', String(options.accounts));
      if (options.gasLimit !== undefined) args.push('--gas-limit', String(options.gasLimit));
      if (options.blockTimeSeconds !== undefined) args.push('--block-time', String(options.blockTimeSeconds));
      if (options.automine === false && options.blockTimeSeconds === undefined) args.push('--no-mining');
      const home = mkdtempSync(join(tmpdir(), 'nftw-anvil-'));
      const child = spawn(ANVIL_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: home } });
      running.set(child, home);
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
      let exited = false;
      child.once('exit', () => {
        exited = true;
        running.delete(child);
        rmSync(home, { recursive: true, force: true });
      });
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 15_000;
      while (!exited && Date.now() < deadline) {
        try {
          await rpc(url, 'eth_chainId');
          const node = new LocalChain(child, url, chainId, port);
          // EIP-55, as viem decodes addresses from logs and return values.
          node.accounts = ((await rpc(url, 'eth_accounts')) as string[]).map((a) => getAddress(a));
          // Interval mining together with automine: anvil's --block-time turns automine off.
          if (options.blockTimeSeconds !== undefined && options.automine === true) await rpc(url, 'evm_setAutomine', [true]);
          return node;
        } catch (err) {
          lastError = err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      child.kill('SIGKILL');
      lastError = new Error(`anvil did not answer on port ${port}${exited ? ' (it exited)' : ''}: ${stderr.trim() || String(lastError)}`);
    }
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  }

  /** Kills the node (SIGKILL, nothing to flush: its state lives in memory) and waits for the exit. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGCONT');
    this.child.kill('SIGKILL');
    await exited;
  }

  /**
   * Freezes the node (SIGSTOP): it accepts connections but answers nothing until `resume()`.
   * Returns once the kernel shows the process stopped: the signal is delivered asynchronously, and
   * on a loaded machine a node not yet stopped answered a request sent right after.
   */
  pause(): void {
    this.child.kill('SIGSTOP');
    const deadline = Date.now() + 2000;
    while (Date.now() < deadline && !this.isStopped()) {
      // A few milliseconds at most: the state is read again at once.
    }
  }

  /** Whether the process is in the stopped state ('T' in /proc/<pid>/stat). */
  private isStopped(): boolean {
    try {
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
    } catch {
      return true;
    }
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Raw JSON-RPC, for methods viem's clients do not wrap. */
  request(method: string, params: unknown[] = []): Promise<unknown> {
    return rpc(this.rpcUrl, method, params);
  }

  async deploy(artifact: ContractArtifact, args: readonly unknown[] = [], from: Address = this.accounts[0]): Promise<Address> {
    const hash = await this.walletClient.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args, account: from });
    const receipt = await this.receipt(hash);
    if (!receipt.contractAddress) throw new Error(`deploying ${artifact.contractName} created no contract`);
    return receipt.contractAddress;
  }

  deployErc721(options: { name?: string; symbol?: string; baseUri?: string } = {}): Promise<Address> {
    return this.deploy(ERC721, [options.name ?? 'Test NFT', options.symbol ?? 'TNFT', options.baseUri ?? '']);
  }

  /** `uri` is the ERC-1155 template, e.g. `http://host/meta/{id}.json`. */
  deployErc1155(uri = ''): Promise<Address> {
    return this.deploy(ERC1155, [uri]);
  }

  deployErc20(options: { name?: string; symbol?: string } = {}): Promise<Address> {
    return this.deploy(ERC20, [options.name ?? 'Test Coin', options.symbol ?? 'TCOIN']);
  }

  /** Sends a contract call and returns its hash without waiting (for blocks mined by hand). */
  send(address: Address, abi: Abi, functionName: string, args: readonly unknown[] = [], from: Address = this.accounts[0]): Promise<Hash> {
    return this.walletClient.writeContract({ address, abi, functionName, args, account: from, chain: this.walletClient.chain });
  }

  /**
   * Sends a contract call and waits for its receipt (mined at once under automine); throws if the
   * call reverted. Under `automine: false` use `send` + `mine` instead.
   */
  async write(
    address: Address,
    abi: Abi,
    functionName: string,
    args: readonly unknown[] = [],
    from?: Address,
  ): Promise<TransactionReceipt> {
    const receipt = await this.receipt(await this.send(address, abi, functionName, args, from));
    if (receipt.status !== 'success') throw new Error(`${functionName} reverted in ${receipt.transactionHash}`);
    return receipt;
  }

  read(address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []): Promise<unknown> {
    return this.publicClient.readContract({ address, abi, functionName, args });
  }

  receipt(hash: Hash): Promise<TransactionReceipt> {
    return this.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 30_000 });
  }

  async blockNumber(): Promise<number> {
    return Number(await this.publicClient.getBlockNumber({ cacheTime: 0 }));
  }

  /** Mines `blocks` empty (or pending-transaction) blocks at once. */
  async mine(blocks = 1): Promise<void> {
    await this.testClient.mine({ blocks });
  }

  /** Snapshot of the whole chain state; `revert(id)` returns to it (the id is then used up). */
  snapshot(): Promise<Hex> {
    return this.testClient.snapshot();
  }

  async revert(id: Hex): Promise<void> {
    await this.testClient.revert({ id });
  }

  async setAutomine(enabled: boolean): Promise<void> {
    await this.testClient.setAutomine(enabled);
  }

  /** Interval mining every `seconds` (0 = off). */
  async setIntervalMining(seconds: number): Promise<void> {
    await this.testClient.setIntervalMining({ interval: seconds });
  }
}

/** `{id}` of an ERC-1155 `uri` as clients substitute it: 64 lowercase hex digits, no 0x. */
export const erc1155HexId = (id: bigint | number | string) => BigInt(id).toString(16).padStart(64, '0');
