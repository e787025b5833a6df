import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, parseAbi, ResponseBodyTooLargeError } from 'viem';
import { urlPolicyOf } from '../../../common/net/url-policy';
import { AppConfig } from '../../../config/app-config';
import type { ChainStandard } from '../../tokens/token.entity';
import { ChainClients, shortReason } from '../chain-clients';
import { MetadataHttpClient } from './metadata-http-client';
import {
  FetchedMetadata,
  IpfsGateway,
  ipfsGateway,
  locateMetadata,
  mapMetadataDocument,
  MetadataFetchError,
  substituteErc1155Id,
  tokenUriAnswerMaxBytes,
} from './token-metadata-document.rules';

/** What names a token's metadata on chain; tokens of several organizations may share it. */
export interface MetadataTarget {
  chainId: number;
  standard: ChainStandard;
  contractAddress: string;
  blockchainTokenId: string;
}

const URI_ABI = parseAbi(['function tokenURI(uint256 tokenId) view returns (string)', 'function uri(uint256 id) view returns (string)']);

/** A fetched document, and whether it came over the network (an http(s) or ipfs URI) or from a `data:` URI. */
export interface FetchedDocument {
  metadata: FetchedMetadata;
  overNetwork: boolean;
}

/**
 * Fetches one token's metadata: the token URI from the contract (ERC-721 `tokenURI`, ERC-1155
 * `uri` with `{id}` substituted) through the chain's client, then the document it points at
 * (`data:` decoded, `ipfs://` through IPFS_GATEWAY_URL, http(s) through the webhook URL policy),
 * bounded in time and size. Throws MetadataFetchError.
 */
@Injectable()
export class TokenMetadataFetcher implements OnApplicationShutdown {
  private readonly http: MetadataHttpClient;
  private readonly gateway: IpfsGateway;

  constructor(
    private readonly config: AppConfig,
    private readonly clients: ChainClients,
  ) {
    this.http = new MetadataHttpClient({
      timeoutMs: config.chain.metadataTimeoutMs,
      maxBytes: config.chain.metadataMaxBytes,
      ...urlPolicyOf(config),
    });
    this.gateway = ipfsGateway(config.chain.ipfsGatewayUrl);
  }

  async fetch(target: MetadataTarget): Promise<FetchedDocument> {
    const uri = await this.tokenUri(target);
    const location = locateMetadata(uri, this.config.chain.ipfsGatewayUrl);
    const overNetwork = location.kind === 'http';
    const text =
      location.kind === 'http' ? await this.http.fetchText(location.url, location.viaGateway ? this.gateway : null) : location.text;
    // From here on, a failure is the document's: its server (if any) did answer.
    const reach = overNetwork ? 'answered' : 'none';
    if (Buffer.byteLength(text, 'utf8') > this.config.chain.metadataMaxBytes) {
      throw new MetadataFetchError(`the metadata is larger than ${this.config.chain.metadataMaxBytes} bytes`, false, reach);
    }
    try {
      return { metadata: mapMetadataDocument(text), overNetwork };
    } catch (error) {
      if (error instanceof MetadataFetchError) throw new MetadataFetchError(error.message, error.retryable, reach);
      throw error;
    }
  }

  /** The token URI as the contract answers it (ERC-1155: with `{id}` already substituted). */
  async tokenUri(target: MetadataTarget): Promise<string> {
    if (!this.clients.has(target.chainId)) {
      // Retried: the operator may add the chain to CHAIN_RPC_URLS and restart.
      throw new MetadataFetchError(`chain ${target.chainId} is not configured in CHAIN_RPC_URLS`, true);
    }
    const functionName = target.standard === 'erc1155' ? 'uri' : 'tokenURI';
    let uri: string;
    try {
      uri = await this.clients.metadata(target.chainId).readContract({
        address: target.contractAddress as `0x${string}`,
        abi: URI_ABI,
        functionName,
        args: [BigInt(target.blockchainTokenId)],
      });
    } catch (error) {
      // The same answer next time: refused for good, and for this token only.
      if (error instanceof BaseError && error.walk((e) => e instanceof ResponseBodyTooLargeError) !== null) {
        const limit = tokenUriAnswerMaxBytes(this.config.chain.metadataMaxBytes);
        throw new MetadataFetchError(`${functionName}(${target.blockchainTokenId}) answered more than ${limit} bytes`, false);
      }
      // A revert (burned token, no such function) answers the same next time; a node error may not.
      const final =
        error instanceof BaseError &&
        error.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError) !== null;
      const reason = shortReason(error);
      throw new MetadataFetchError(
        final ? `${functionName}(${target.blockchainTokenId}) reverted: ${reason}` : `the chain ${target.chainId} node failed: ${reason}`,
        !final,
      );
    }
    return target.standard === 'erc1155' ? substituteErc1155Id(uri, target.blockchainTokenId) : uri;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.http.close();
  }
}
