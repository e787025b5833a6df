import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AppConfig, runsFollowers } from '../../config/app-config';
import { ChainClients } from '../chain/chain-clients';
import { ChainHeads } from '../chain/new-heads';
import { ContractIndexer } from './contract-indexer';
import { ContractLedgerRepository } from './contract-ledger.repository';
import { IndexedContractRepository } from './indexed-contract.repository';
import { SpamService } from '../spam/spam.service';

/**
 * Starts one contract indexer per configured chain in indexer and all processes. Every instance
 * runs them; the lease on each contract's row lets one instance index it at a time. Over a ws(s)
 * node, every head pushed wakes the chain's indexer.
 */
@Injectable()
export class ContractIndexerService implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Names this process in the leases it holds (host, pid, and a nonce so a restart is a new owner). */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly indexers = new Map<number, ContractIndexer>();

  constructor(
    private readonly config: AppConfig,
    private readonly clients: ChainClients,
    private readonly em: EntityManager,
    private readonly contracts: IndexedContractRepository,
    private readonly ledger: ContractLedgerRepository,
    private readonly spam: SpamService,
    private readonly heads: ChainHeads,
  ) {}

  onApplicationBootstrap(): void {
    if (!runsFollowers(this.config)) return;
    for (const chainId of this.clients.chainIds()) {
      const indexer = new ContractIndexer({
        config: this.config,
        chainId,
        client: this.clients.get(chainId),
        owner: this.owner,
        em: this.em,
        contracts: this.contracts,
        ledger: this.ledger,
        spam: this.spam,
      });
      this.indexers.set(chainId, indexer);
      indexer.start();
      this.heads.listen(chainId, () => indexer.newHead());
    }
  }

  /** A contract was registered in this process: its chain's indexer here (if any) starts on it now. */
  wake(chainId: number): void {
    this.indexers.get(chainId)?.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.indexers.values()].map((i) => i.stop()));
  }
}
