import { bearer, createOrganization, TestOrganization } from './factories';
import { LocalChain } from './evm';
import { ReceivedWebhook, TestReceiver, waitUntil } from './receiver';
import { createTestApp, OPERATOR_KEY, TestApp } from './test-app';
import { configureWebhooks } from './webhooks';

export const SECRET = 'chain-suite-shared-secret-0123456789';

/** The service's environment for following `chain` at once (confirmations 0 unless overridden). */
export function followEnv(chain: LocalChain, overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    CHAIN_RPC_URLS: `${chain.chainId}=${chain.rpcUrl}`,
    CHAIN_CONFIRMATIONS: '0',
    CHAIN_POLL_INTERVAL_MS: '100',
    CHAIN_START_BLOCK: '0',
    ...overrides,
  };
}

export async function startFollowing(chain: LocalChain, overrides: Record<string, string | undefined> = {}): Promise<TestApp> {
  return createTestApp(followEnv(chain, overrides));
}

/** An organization whose webhooks (every type) go to `receiver`. */
export async function watchingOrganization(t: TestApp, receiver: TestReceiver, name?: string): Promise<TestOrganization> {
  const org = await createOrganization(t, name);
  await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
  return org;
}

export async function walletAt(t: TestApp, org: TestOrganization, address: string, name = 'wallet'): Promise<string> {
  const res = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name, address }).expect(201);
  return res.body.id as string;
}

export interface ChainFigures {
  chainId: number;
  headBlock: number | null;
  appliedBlock: number | null;
  lagBlocks: number | null;
  lagSeconds: number | null;
  lastError: string | null;
}

export async function chainFigures(t: TestApp, chainId: number): Promise<ChainFigures> {
  const res = await t.http().get('/admin/v1/chains').set(bearer(OPERATOR_KEY));
  if (res.status !== 200)
    throw new Error(
      `GET /admin/v1/chains answered ${res.status}: ${t.logs
        .filter((l) => /"level":(40|50)/.test(l))
        .slice(-5)
        .join('\n')}`,
    );
  return (res.body.chains as ChainFigures[]).find((c) => c.chainId === chainId)!;
}

/** Waits until the follower has applied `block` (the chain's current head by default). */
export async function waitApplied(t: TestApp, chain: LocalChain, block?: number, timeoutMs = 30_000): Promise<ChainFigures> {
  const target = block ?? (await chain.blockNumber());
  return waitUntil(
    () => chainFigures(t, chain.chainId),
    (f) => f.appliedBlock !== null && f.appliedBlock >= target,
    timeoutMs,
  );
}

export const isTransactionEvent =
  (organizationId: string, action = 'create') =>
  (w: ReceivedWebhook) =>
    w.body.resourceType === 'Transaction' && w.body.action === action && w.body.organizationId === organizationId;

export interface ChainTransaction {
  id: string;
  organizationId: string;
  type: string;
  tokenId: string;
  fromWalletId: string | null;
  toWalletId: string | null;
  amount: string;
  source: string;
  status: string;
  chain: {
    chainId: number;
    blockNumber: number;
    blockHash: string;
    blockTimestampUtc: string;
    transactionHash: string;
    logIndex: number;
    batchIndex: number | null;
    from: string;
    to: string;
  } | null;
  createdAtUtc: string;
}

/** The transactions named by the `transaction` webhooks the receiver got for `org`, in chain order. */
export async function transactionsFromWebhooks(t: TestApp, org: TestOrganization, receiver: TestReceiver): Promise<ChainTransaction[]> {
  const ids = [...new Set(receiver.received.filter(isTransactionEvent(org.id)).map((w) => String(w.body.resourceId)))];
  const transactions: ChainTransaction[] = [];
  for (const id of ids) {
    const res = await t.http().get(`/v1/transactions/${id}`).set(bearer(org.adminKey)).expect(200);
    transactions.push(res.body as ChainTransaction);
  }
  return transactions.sort(
    (a, b) =>
      (a.chain?.blockNumber ?? 0) - (b.chain?.blockNumber ?? 0) ||
      (a.chain?.logIndex ?? 0) - (b.chain?.logIndex ?? 0) ||
      (a.chain?.batchIndex ?? -1) - (b.chain?.batchIndex ?? -1),
  );
}

/** A wallet's balances as `tokenId -> amount`. */
export async function balances(t: TestApp, org: TestOrganization, walletId: string): Promise<Record<string, string>> {
  const res = await t.http().get(`/v2/wallets/${walletId}/nft-balances?pageSize=100`).set(bearer(org.adminKey)).expect(200);
  return Object.fromEntries((res.body.nftTokenBalances as { tokenId: string; amount: string }[]).map((b) => [b.tokenId, b.amount]));
}
