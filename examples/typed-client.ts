/**
 * The typed client (clients/typescript) in an integrator's code: list the wallets, show each
 * one's NFT balances, and verify a webhook with the Standard Webhooks library before reading its
 * typed body.
 *
 *   BASE_URL=http://localhost:3000 API_KEY=nftw_... npx ts-node --swc examples/typed-client.ts
 */
import { Webhook } from 'standardwebhooks';
import { createNftWalletClient, type WebhookBody, type WebhookType } from '../clients/typescript/src';

/** Every wallet of the organization (the first page) with its NFT balances. */
export async function walletsWithBalances(baseUrl: string, apiKey: string) {
  const client = createNftWalletClient({ baseUrl, apiKey });
  const wallets = await client.GET('/v1/wallets', { params: { query: { pageSize: 100 } } });
  if (wallets.error) throw new Error(`${wallets.response.status} ${wallets.error.code}: ${wallets.error.detail}`);
  const out = [];
  for (const wallet of wallets.data.wallets) {
    const balances = await client.GET('/v2/wallets/{walletId}/nft-balances', { params: { path: { walletId: wallet.id } } });
    if (balances.error) throw new Error(`${balances.response.status} ${balances.error.code}: ${balances.error.detail}`);
    out.push({ wallet, balances: balances.data });
  }
  return out;
}

/**
 * A webhook's body, once its `webhook-signature` (with its 5-minute timestamp window) verified
 * against the endpoint's shared secret. The library takes the secret as `whsec_` + Base64 of its
 * UTF-8 bytes. Throws `WebhookVerificationError` on a bad or stale signature.
 */
export function verifiedWebhook<T extends WebhookType>(
  _type: T,
  rawBody: string,
  headers: Record<string, string>,
  sharedSecret: string,
): WebhookBody<T> {
  const verifier = new Webhook(`whsec_${Buffer.from(sharedSecret, 'utf8').toString('base64')}`);
  return verifier.verify(rawBody, headers) as WebhookBody<T>;
}

if (require.main === module) {
  const { BASE_URL = 'http://localhost:3000', API_KEY } = process.env;
  if (!API_KEY) throw new Error('set API_KEY to an organization API key');
  void walletsWithBalances(BASE_URL, API_KEY).then((rows) => {
    for (const { wallet, balances } of rows) console.log(wallet.id, JSON.stringify(balances));
  });
}
