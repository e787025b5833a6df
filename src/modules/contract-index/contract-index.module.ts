import { Module } from '@nestjs/common';
import { ChainModule } from '../chain/chain.module';
import { ContractIndexerService } from './contract-indexer.service';
import { ContractLedgerRepository } from './contract-ledger.repository';
import { ContractReadsRepository } from './contract-reads.repository';
import { ContractReadsService } from './contract-reads.service';
import { ContractsController } from './contracts.controller';
import { ContractsService } from './contracts.service';
import { IndexedContractRepository } from './indexed-contract.repository';

/**
 * The whole-contract index (docs/API.md "Whole-contract index"): every holder and transfer of a
 * registered contract, watched or not, readable at any indexed block. Owns `indexed_contract`
 * and its index tables; reaches the chain through the chain module's clients. The indexers run
 * in processes with ROLE indexer or all.
 */
@Module({
  imports: [ChainModule],
  controllers: [ContractsController],
  providers: [
    IndexedContractRepository,
    ContractLedgerRepository,
    ContractReadsRepository,
    ContractsService,
    ContractReadsService,
    ContractIndexerService,
  ],
})
export class ContractIndexModule {}
