import { Module } from '@nestjs/common';
import { TokensModule } from '../tokens/tokens.module';
import { TransactionsModule } from '../transactions/transactions.module';
import { WalletsModule } from '../wallets/wallets.module';
import { ChainClients } from './chain-clients';
import { ChainCursorRepository } from './chain-cursor.repository';
import { ChainFollowerService } from './chain-follower.service';
import { ChainStatusService } from './chain-status.service';
import { ChainHeads } from './new-heads';
import { ChainsAdminController, WalletSyncController } from './chains.controller';
import { MetadataBreakerRepository } from './metadata/metadata-breaker.repository';
import { TokenMetadataFetcher } from './metadata/token-metadata-fetcher';
import { TokenMetadataWorker } from './metadata/token-metadata.worker';
import { WalletSyncRepository } from './wallet-sync.repository';
import { WalletSyncRunner } from './wallet-sync.runner';
import { WalletSyncService } from './wallet-sync.service';

/**
 * Following EVM chains (docs/CHAIN.md "Following a chain"): the followers that turn NFT transfer logs
 * at watched addresses into wallet movements, and the operations around them. The ledger's rows
 * stay the transactions module's (written through ChainMovementsService); this module owns its
 * cursors, block hashes, wallet sync requests and the circuit breakers of token metadata fetches.
 */
@Module({
  // Token metadata: fetched by the worker (ROLE indexer|all), written through the tokens module.
  imports: [TokensModule, TransactionsModule, WalletsModule],
  controllers: [ChainsAdminController, WalletSyncController],
  providers: [
    ChainClients,
    ChainHeads,
    ChainCursorRepository,
    WalletSyncRepository,
    WalletSyncRunner,
    WalletSyncService,
    ChainFollowerService,
    ChainStatusService,
    TokenMetadataFetcher,
    MetadataBreakerRepository,
    TokenMetadataWorker,
  ],
  exports: [ChainClients, ChainHeads],
})
export class ChainModule {}
