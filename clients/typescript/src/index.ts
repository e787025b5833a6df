import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths, webhooks } from './schema';

export type { components, operations, paths, webhooks };

/** The webhook types an organization can subscribe to (the document's `webhooks` section). */
export type WebhookType = keyof webhooks;

/**
 * The JSON body of a webhook of `type` as the service sends it, e.g. `WebhookBody<'nft'>`. Parse
 * it only after the signature checked out over the raw bytes (see the README, "Webhooks").
 */
export type WebhookBody<T extends WebhookType> =
  NonNullable<webhooks[T]['post']> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** Every response schema of the API by name, e.g. `Schemas['WalletDto']`. */
export type Schemas = components['schemas'];

/** The body of every error answer (RFC 9457 problem details with a stable `code`). */
export type ProblemDetails = Schemas['ProblemDetails'];

export type NftWalletClient = Client<paths>;

export interface NftWalletClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the service runs, e.g. `https://nft-wallet.example.com`. */
  baseUrl: string;
  /** An organization API key (`nftw_…`), or the operator key for `/admin/v1` routes. */
  apiKey: string;
}

/**
 * A client whose paths, parameters, bodies and answers are typed from the service's OpenAPI
 * document: `client.GET('/v1/wallets/{walletId}', { params: { path: { walletId } } })` gives
 * `{ data: WalletDto }` on success and `{ error: ProblemDetails }` on a documented error status.
 */
export function createNftWalletClient({ baseUrl, apiKey, headers, ...options }: NftWalletClientOptions): NftWalletClient {
  return createClient<paths>({
    ...options,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(headers as Record<string, string> | undefined), authorization: `Bearer ${apiKey}` },
  });
}
