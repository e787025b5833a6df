import { Module } from '@nestjs/common';
import { TokensModule } from '../tokens/tokens.module';
import { ChainClients } from './chain-clients';
import { TokenMetadataFetcher } from './metadata/token-metadata-fetcher';
import { TokenMetadataWorker } from './metadata/token-metadata.worker';

/**
 * Following EVM chains (README.md "Following a chain"): the followers that turn NFT transfer logs
 * at watched addresses into wallet movements, and the operations around them. The ledger's rows
 * stay the transactions module's; this module owns its cursors, block hashes and sync requests.
 */
@Module({
  // Token metadata: fetched by the worker (ROLE indexer|all), written through the tokens module.
  imports: [TokensModule],
  providers: [ChainClients, TokenMetadataFetcher, TokenMetadataWorker],
  exports: [ChainClients],
})
export class ChainModule {}
