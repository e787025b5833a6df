import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, parseAbi } from 'viem';
import { AppConfig } from '../../../config/app-config';
import type { ChainStandard } from '../../tokens/token.entity';
import { ChainClients, shortReason } from '../chain-clients';
import { MetadataHttpClient } from './metadata-http-client';
import {
  FetchedMetadata,
  locateMetadata,
  mapMetadataDocument,
  MetadataFetchError,
  substituteErc1155Id,
} from './token-metadata-document.rules';

/** What names a token's metadata on chain; tokens of several organizations may share it. */
export interface MetadataTarget {
  chainId: number;
  standard: ChainStandard;
  contractAddress: string;
  blockchainTokenId: string;
}

const URI_ABI = parseAbi(['function tokenURI(uint256 tokenId) view returns (string)', 'function uri(uint256 id) view returns (string)']);

/**
 * Fetches one token's metadata: the token URI from the contract (ERC-721 `tokenURI`, ERC-1155
 * `uri` with `{id}` substituted) through the chain's client, then the document it points at
 * (`data:` decoded, `ipfs://` through IPFS_GATEWAY_URL, http(s) through the webhook URL policy),
 * bounded in time and size. Throws MetadataFetchError.
 */
@Injectable()
export class TokenMetadataFetcher implements OnApplicationShutdown {
  private readonly http: MetadataHttpClient;
  private readonly gatewayOrigin: string;

  constructor(
    private readonly config: AppConfig,
    private readonly clients: ChainClients,
  ) {
    this.http = new MetadataHttpClient({
      timeoutMs: config.chain.metadataTimeoutMs,
      maxBytes: config.chain.metadataMaxBytes,
      allowHttp: config.webhook.allowHttp,
      allowPrivateNetworks: config.webhook.allowPrivateNetworks,
      allowedPorts: config.webhook.allowedPorts,
      proxyUrl: config.webhook.proxyUrl,
    });
    this.gatewayOrigin = new URL(config.chain.ipfsGatewayUrl).origin;
  }

  async fetch(target: MetadataTarget): Promise<FetchedMetadata> {
    const uri = await this.tokenUri(target);
    const location = locateMetadata(uri, this.config.chain.ipfsGatewayUrl);
    const text =
      location.kind === 'data' ? location.text : await this.http.fetchText(location.url, location.viaGateway ? this.gatewayOrigin : null);
    if (Buffer.byteLength(text, 'utf8') > this.config.chain.metadataMaxBytes) {
      throw new MetadataFetchError(`the metadata is larger than ${this.config.chain.metadataMaxBytes} bytes`, false);
    }
    return mapMetadataDocument(text);
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
      uri = await this.clients.get(target.chainId).readContract({
        address: target.contractAddress as `0x${string}`,
        abi: URI_ABI,
        functionName,
        args: [BigInt(target.blockchainTokenId)],
      });
    } catch (error) {
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
