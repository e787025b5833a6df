import { MediaFailure } from './media.rules';

/**
 * The gateway URL of an `ipfs://<cid>[/<path>]` image (the older `ipfs://ipfs/<cid>` too), the
 * path rule of token metadata: IPFS_GATEWAY_URL followed by the CID and path.
 */
export function ipfsImageUrl(uri: string, gatewayUrl: string): string {
  const match = /^ipfs:\/\/(?:ipfs\/)?(.+)$/i.exec(uri.trim());
  if (!match) throw new MediaFailure('FETCH_FAILED', 'the ipfs URI is not accepted', false);
  const gateway = gatewayUrl.endsWith('/') ? gatewayUrl : `${gatewayUrl}/`;
  return `${gateway}${match[1]}`;
}
