import { bearer, createApiKey, createOrganization, TestOrganization } from './factories';
import { newAddress, nextBlockchainTokenId, nftApi } from './nft';
import { TestReceiver, waitUntil } from './receiver';
import { OPERATOR_KEY, TestApp } from './test-app';
import { configureWebhooks, WEBHOOKS_PATH } from './webhooks';

const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';

export const FIXTURE_SECRET = 'fixture-shared-secret-0123456789';

/**
 * A chain the fixture's app is configured for, at a closed port on loopback: enough to register a
 * contract to index (its standard stays unknown, its index empty), with no node to follow.
 */
export const FIXTURE_CHAIN_ID = 31999;
export const FIXTURE_CHAIN_ENV = { CHAIN_RPC_URLS: `${FIXTURE_CHAIN_ID}=http://127.0.0.1:9` };

/** An organization holding one object of every kind a route can address, and keys of every kind. */
export interface OrgFixture {
  org: TestOrganization;
  keys: { read: string; write: string; admin: string; auditor: string; revoked: string };
  /** A real value for every path parameter of the API, all of this organization. */
  params: Record<string, string>;
}

export async function createOrgFixture(t: TestApp, receiver: TestReceiver): Promise<OrgFixture> {
  const org = await createOrganization(t);
  const read = (await createApiKey(t, org.id, ['read'])).key;
  const write = (await createApiKey(t, org.id, ['write'])).key;
  const auditor = (await createApiKey(t, org.id, ['auditor'])).key;
  const revoked = await createApiKey(t, org.id, ['admin'], 'revoked');
  await t.http().delete(`/admin/v1/organizations/${org.id}/api-keys/${revoked.id}`).set(bearer(OPERATOR_KEY)).expect(204);
  const disposable = await createApiKey(t, org.id, ['read'], 'disposable');

  await configureWebhooks(t, org, { url: receiver.url, sharedSecret: FIXTURE_SECRET });
  const api = nftApi(t, org.adminKey);
  const wallet = await api.wallet({ name: 'fixture wallet' });
  const token = await api.token({ contractAddress: newAddress(), blockchainTokenId: nextBlockchainTokenId() });
  const transaction = await api.mint(token.id, wallet.id, '5');
  const contractAddress = newAddress();
  await t
    .http()
    .post('/api/organization/v1/current-organization/nft-whitelist/contracts')
    .set(bearer(org.adminKey))
    .send({ contractAddresses: [contractAddress] })
    .expect(200);
  // Switched off, so that it receives nothing: suites count the default endpoint's webhooks.
  const endpoint = await t
    .http()
    .post(ENDPOINTS_PATH)
    .set(bearer(org.adminKey))
    .send({ url: receiver.url, webhookTypes: ['nft'], enabled: false, sharedSecret: FIXTURE_SECRET })
    .expect(201);
  const indexed = await registerFixtureContract(t, org.adminKey);
  const log = await waitUntil(
    () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
    (res) => res.status === 200 && res.body.webhooks.length > 0,
  );
  return {
    org,
    keys: { read, write, admin: org.adminKey, auditor, revoked: revoked.key },
    params: {
      organizationId: org.id,
      apiKeyId: disposable.id,
      walletId: wallet.id,
      tokenId: token.id,
      transactionId: transaction.id,
      webhookId: log.body.webhooks[0].id,
      contractAddress,
      // An endpoint beside the default one, which (unlike the default) a DELETE can remove.
      endpointId: endpoint.body.id,
      contractId: indexed,
      // Long enough never to be found inside another value of an answer.
      blockchainTokenId: `9${Date.now()}${nextBlockchainTokenId()}`,
      // A thumbnail's path (its link's query, the signature, is what the matrix leaves out).
      sha256: 'ab'.repeat(32),
      file: '256.webp',
      // A chain id names no organization's object; the fixture's app follows no chain (spam overrides answer UNKNOWN_CHAIN).
      chainId: '987654321',
    },
  };
}

/** A contract to index, on the fixture's chain (the app needs FIXTURE_CHAIN_ENV); its id. */
async function registerFixtureContract(t: TestApp, adminKey: string): Promise<string> {
  const res = await t
    .http()
    .post('/v1/contracts')
    .set(bearer(adminKey))
    .send({ chainId: FIXTURE_CHAIN_ID, address: newAddress(), fromBlock: 0 })
    .expect(201);
  return res.body.id as string;
}

/**
 * Registers the fixture's contract again when a caller's DELETE (role write, so not only the
 * admin's, which runs last) removed it, so that the next caller finds one.
 */
export async function restoreIndexedContract(t: TestApp, fixture: OrgFixture): Promise<void> {
  const res = await t.http().get(`/v1/contracts/${fixture.params.contractId}`).set(bearer(fixture.org.adminKey));
  if (res.status === 404) fixture.params.contractId = await registerFixtureContract(t, fixture.org.adminKey);
}

/** A valid body for each writing route, so that a refusal can only come from access rules. */
export function sampleBody(method: string, path: string, params: Record<string, string>): Record<string, unknown> | undefined {
  const bodies: Record<string, () => Record<string, unknown>> = {
    'POST /admin/v1/organizations': () => ({ name: 'sample organization' }),
    'POST /admin/v1/organizations/:organizationId/api-keys': () => ({ name: 'sample', roles: ['read'] }),
    'POST /api/organization/v1/current-organization/api-keys': () => ({ name: 'sample', roles: ['read'] }),
    'POST /v1/wallets': () => ({ name: 'sample wallet' }),
    'POST /v1/wallets/:walletId/sync': () => ({ chainId: 1, fromBlock: 0 }),
    'POST /v1/contracts': () => ({ chainId: FIXTURE_CHAIN_ID, address: newAddress(), fromBlock: 0 }),
    'POST /v1/tokens': () => ({ contractAddress: newAddress(), blockchainTokenId: nextBlockchainTokenId() }),
    'PATCH /v1/tokens/:tokenId': () => ({ metadata: { name: 'renamed' } }),
    'POST /v1/transactions': () => ({ tokenId: params.tokenId, toWalletId: params.walletId }),
    'POST /v1/transactions/batch': () => ({ transactions: [{ tokenId: params.tokenId, toWalletId: params.walletId }] }),
    'POST /api/organization/v1/current-organization/webhook-config/test': () => ({}),
    'POST /api/organization/v1/current-organization/webhook-endpoints/:endpointId/test': () => ({}),
    'POST /api/organization/v1/current-organization/webhook-endpoints/filter-test': () => ({
      filter: { action: 'create' },
      event: { webhookType: 'nft', resourceType: 'Token', action: 'create', changes: null, data: null },
    }),
    'POST /api/organization/v1/current-organization/webhooks/replay': () => ({ since: new Date(Date.now() - 60_000).toISOString() }),
    'PATCH /api/organization/v1/current-organization/webhook-config': () => ({}),
    'PATCH /api/organization/v1/current-organization/nft-whitelist': () => ({ enabled: false }),
    'PUT /api/organization/v1/current-organization/spam-overrides/:chainId/:contractAddress': () => ({ isSpam: true }),
    'POST /api/organization/v1/current-organization/nft-whitelist/contracts': () => ({ contractAddresses: [newAddress()] }),
    // Off, so that the endpoints a suite adds receive nothing.
    'POST /api/organization/v1/current-organization/webhook-endpoints': () => ({
      url: 'http://127.0.0.1:9999/sample',
      webhookTypes: ['nft'],
      enabled: false,
    }),
  };
  const make = bodies[`${method} ${path}`];
  if (make) return make();
  return method === 'GET' || method === 'DELETE' ? undefined : {};
}
