import { Module } from '@nestjs/common';
import { ChainClients } from './chain-clients';

/**
 * Following EVM chains (README.md "Following a chain"): the followers that turn NFT transfer logs
 * at watched addresses into wallet movements, and the operations around them. The ledger's rows
 * stay the transactions module's; this module owns its cursors, block hashes and sync requests.
 */
@Module({
  providers: [ChainClients],
  exports: [ChainClients],
})
export class ChainModule {}
