import { Dispatcher } from 'undici';
import { checkProxiedDestination, createEgressDispatcher } from '../../../common/net/egress';
import { checkWebhookUrl } from '../../../common/net/url-policy';
import type { PortRange } from '../../../config/egress-config';
import { classifyFetchFailure } from '../../../common/net/fetch-failure';
import { httpStatusError, IpfsGateway, isUnderGateway, MetadataFetchError } from './token-metadata-document.rules';

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
 * GETs metadata documents. A token URI is chosen by whoever deployed the contract, so http(s)
 * targets go through the webhook URL policy: scheme and port checked on the URL, and the address
 * actually connected to checked by the guarded lookup (a name that resolves to a private or
 * metadata-service address is refused when the deployment does not allow private networks). The
 * configured IPFS gateway is the operator's own choice and is exempt (it may be a node on the
 * private network), but only under its own path: a redirect elsewhere, even on its host, is
 * checked like any token URI.
 */
export class MetadataHttpClient {
  private readonly guarded: Dispatcher;
  private readonly trusted: Dispatcher;

  constructor(private readonly options: MetadataHttpOptions) {
    const common = {
      keepAliveTimeout: 10_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connectTimeout: options.timeoutMs,
      connections: 16,
    };
    const egress = { proxyUrl: options.proxyUrl ?? null, allowPrivateNetworks: options.allowPrivateNetworks, agent: common };
    this.guarded = createEgressDispatcher({ ...egress, guarded: true });
    this.trusted = createEgressDispatcher({ ...egress, guarded: false });
  }

  /**
   * The document at `url` as text. A URL under `gateway` (its origin and path) is fetched without
   * the policy. Throws MetadataFetchError, retryable for timeouts, network errors and 5xx/404/429.
   */
  async fetchText(url: string, gateway: IpfsGateway | null = null): Promise<string> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let target = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const parsed = new URL(target);
      const trusted = gateway !== null && isUnderGateway(parsed, gateway);
      // The gateway's host beyond its path is the operator's network, not IPFS content.
      if (gateway !== null && !trusted && parsed.origin === gateway.origin) {
        throw new MetadataFetchError('the IPFS gateway redirected out of its path', false, 'answered');
      }
      if (!trusted) {
        // Literal IPs never reach the guarded lookup; the URL check judges them.
        const reason = checkWebhookUrl(target, this.options);
        if (reason) throw new MetadataFetchError(`the metadata URL ${reason}`, false);
      }
      let res: Dispatcher.ResponseData;
      try {
        if (!trusted) await checkProxiedDestination(target, this.options.proxyUrl ?? null, this.options);
        res = await (trusted ? this.trusted : this.guarded).request({
          origin: parsed.origin,
          path: `${parsed.pathname}${parsed.search}`,
          method: 'GET',
          headers: { accept: 'application/json, */*;q=0.5', 'user-agent': 'nft-wallet-service metadata fetcher' },
          signal,
        });
      } catch (error) {
        throw this.describe(error);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof res.headers.location === 'string') {
        await res.body.dump({ limit: 16 * 1024 }).catch(() => undefined);
        target = new URL(res.headers.location, target).toString();
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump({ limit: 16 * 1024 }).catch(() => undefined);
        throw httpStatusError(res.statusCode);
      }
      return this.readBounded(res);
    }
    throw new MetadataFetchError(`more than ${MAX_REDIRECTS} redirects`, false, 'answered');
  }

  async close(): Promise<void> {
    await Promise.all([this.guarded.close(), this.trusted.close()]);
  }

  private async readBounded(res: Dispatcher.ResponseData): Promise<string> {
    const tooLarge = () => new MetadataFetchError(`the metadata is larger than ${this.options.maxBytes} bytes`, false, 'answered');
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.options.maxBytes) {
      res.body.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const buffer = chunk as Buffer;
        size += buffer.length;
        if (size > this.options.maxBytes) {
          res.body.destroy();
          throw tooLarge();
        }
        chunks.push(buffer);
      }
    } catch (error) {
      if (error instanceof MetadataFetchError) throw error;
      throw this.describe(error);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  private describe(error: unknown): MetadataFetchError {
    const failure = classifyFetchFailure(error, this.options.timeoutMs);
    // A refusal by the URL policy is final; a timeout or a network error may pass on a retry.
    if (failure.kind === 'blocked') return new MetadataFetchError(`the metadata URL ${failure.message}`, false);
    return new MetadataFetchError(failure.message, true, 'unreachable');
  }
}
