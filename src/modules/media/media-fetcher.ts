import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { BoundedFetchError, BoundedHttpClient } from '../../common/net/bounded-fetch';
import { urlPolicyOf } from '../../common/net/url-policy';
import { IpfsGateway, ipfsGateway, ipfsGatewayUrlFor, MetadataFetchError } from '../chain/metadata/token-metadata-document.rules';
import { fetchFailureOf, locateImage, MEDIA_FETCH_TIMEOUT_MS, MEDIA_MAX_BYTES, MEDIA_MAX_REDIRECTS, MediaFailure } from './media.rules';

/**
 * The bytes of a token's image: `data:` decoded, `ipfs://` from IPFS_GATEWAY_URL with the path
 * rule of token metadata (the operator's gateway is exempt from the URL policy under its own path), http(s) under the webhook URL policy
 * with every redirect checked, through WEBHOOK_PROXY_URL when set; 15 s and 20 MiB for the whole
 * fetch. Throws MediaFailure.
 */
@Injectable()
export class MediaFetcher implements OnApplicationShutdown {
  private readonly http: BoundedHttpClient;
  private readonly gateway: IpfsGateway;

  constructor(private readonly config: AppConfig) {
    this.http = new BoundedHttpClient({
      timeoutMs: MEDIA_FETCH_TIMEOUT_MS,
      maxBytes: MEDIA_MAX_BYTES,
      maxRedirects: MEDIA_MAX_REDIRECTS,
      ...urlPolicyOf(config),
      headers: { accept: 'image/*', 'user-agent': 'nft-wallet-service media fetcher' },
    });
    this.gateway = ipfsGateway(config.chain.ipfsGatewayUrl);
  }

  async fetch(image: string): Promise<{ bytes: Buffer; fetched: boolean }> {
    const location = locateImage(image, (uri) => this.ipfsUrl(uri));
    if (location.kind === 'data') {
      if (location.bytes.length > MEDIA_MAX_BYTES) throw new MediaFailure('TOO_LARGE', 'the data: URI is larger than 20 MiB');
      return { bytes: location.bytes, fetched: false };
    }
    try {
      return { bytes: await this.http.fetch(location.url, location.viaGateway ? this.gateway : null), fetched: true };
    } catch (error) {
      if (error instanceof BoundedFetchError) throw fetchFailureOf(error);
      throw error;
    }
  }

  /** Ends the fetches in flight: a stopping process does not wait out a slow image host. */
  async abortAll(): Promise<void> {
    await this.http.destroy();
  }

  /**
   * The gateway URL of an ipfs:// image, by the rule token metadata follows (docs/CHAIN.md "Following a
   * chain"): only a CID and a path that stays under the gateway's path; anything else is not
   * fetched, and the gateway gets no request.
   */
  private ipfsUrl(uri: string): string {
    try {
      return ipfsGatewayUrlFor(uri, this.gateway).toString();
    } catch (error) {
      if (error instanceof MetadataFetchError) throw new MediaFailure('FETCH_FAILED', error.message);
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.http.destroy();
  }
}
