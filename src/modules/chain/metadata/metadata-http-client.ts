import { BoundedFetchError, BoundedHttpClient } from '../../../common/net/bounded-fetch';
import type { PortRange } from '../../../config/egress-config';
import { httpStatusError, IpfsGateway, MetadataFetchError } from './token-metadata-document.rules';

export interface MetadataHttpOptions {
  /** The whole fetch, redirects and body included. */
  timeoutMs: number;
  maxBytes: number;
  /** The webhook URL policy: token URIs are chosen by whoever deployed the contract. */
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
  allowedPorts: readonly PortRange[];
  /** WEBHOOK_PROXY_URL: metadata leaves through the same egress proxy as webhooks; null connects directly. */
  proxyUrl?: string | null;
}

/** Redirects followed per fetch; each target is checked against the policy like the first. */
const MAX_REDIRECTS = 3;

/**
 * GETs metadata documents through the bounded fetch every URL chosen by someone else takes
 * (common/net/bounded-fetch.ts): a token URI is chosen by whoever deployed the contract, so
 * http(s) targets go through the webhook URL policy, checked on every URL and on the address
 * actually connected to. The configured IPFS gateway is the operator's own choice and is exempt
 * (it may be a node on the private network), but only under its own path: a redirect elsewhere,
 * even on its host, is refused or checked like any token URI.
 */
export class MetadataHttpClient {
  private readonly http: BoundedHttpClient;

  constructor(private readonly options: MetadataHttpOptions) {
    this.http = new BoundedHttpClient({
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      maxRedirects: MAX_REDIRECTS,
      allowHttp: options.allowHttp,
      allowPrivateNetworks: options.allowPrivateNetworks,
      allowedPorts: options.allowedPorts,
      proxyUrl: options.proxyUrl ?? null,
      headers: { accept: 'application/json, */*;q=0.5', 'user-agent': 'nft-wallet-service metadata fetcher' },
    });
  }

  /**
   * The document at `url` as text. A URL under `gateway` (its origin and path) is fetched without
   * the policy. Throws MetadataFetchError, retryable for timeouts, network errors and 5xx/404/429.
   */
  async fetchText(url: string, gateway: IpfsGateway | null = null): Promise<string> {
    try {
      return (await this.http.fetch(url, gateway)).toString('utf8');
    } catch (error) {
      throw error instanceof BoundedFetchError ? this.describe(error) : error;
    }
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private describe(error: BoundedFetchError): MetadataFetchError {
    switch (error.kind) {
      // A refusal by the URL policy is final; a timeout or a network error may pass on a retry.
      case 'blocked':
        return new MetadataFetchError(`the metadata URL ${error.message}`, false);
      case 'status':
        return httpStatusError(error.status ?? 0);
      case 'tooLarge':
        return new MetadataFetchError(`the metadata is larger than ${this.options.maxBytes} bytes`, false, 'answered');
      case 'outsidePrefix':
      case 'redirects':
        return new MetadataFetchError(error.message, false, 'answered');
      default:
        return new MetadataFetchError(error.message, true, 'unreachable');
    }
  }
}
