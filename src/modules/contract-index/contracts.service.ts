import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import { conflict, notFound, unprocessable } from '../../common/errors/domain-error';
import { parseAddress } from '../../common/evm-address';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { withTimeout } from '../../common/async/with-timeout';
import { LOCK_NAMES } from '../../database/lock-keys';
import { queryRows } from '../../database/raw-sql';
import { ChainClients } from '../chain/chain-clients';
import { MAX_CONTRACTS_PER_ORGANIZATION } from './contract-index.rules';
import { ContractIndexerService } from './contract-indexer.service';
import { ContractStandard, IndexedContract, IndexedContractRepository } from './indexed-contract.repository';
import { probeStandard } from './standard-probe';

/** How long a registration waits for the node's ERC-165 answer; past it the indexer asks. */
const STANDARD_PROBE_MS = 3_000;

/** Registrations of contracts to index (POST/GET/DELETE /v1/contracts). */
@Injectable()
export class ContractsService {
  private readonly logger = new Logger('ContractsService');

  constructor(
    private readonly em: EntityManager,
    private readonly clients: ChainClients,
    private readonly contracts: IndexedContractRepository,
    private readonly indexers: ContractIndexerService,
  ) {}

  /**
   * Registers (chainId, address) from `fromBlock`. The standard is asked of the node at once; a
   * node that does not answer in time leaves it to the indexer. The organization's lock makes
   * the limit exact under concurrent requests.
   */
  async register(organizationId: string, input: { chainId: number; address: string; fromBlock: number }): Promise<IndexedContract> {
    const address = parseAddress(input.address, 'address');
    if (!this.clients.has(input.chainId)) {
      throw unprocessable('UNKNOWN_CHAIN', `Chain ${input.chainId} is not followed by this service.`);
    }
    let standard: ContractStandard | null = null;
    let standardKnown = false;
    try {
      standard = await withTimeout(probeStandard(this.clients.get(input.chainId), address), STANDARD_PROBE_MS);
      standardKnown = true;
    } catch (error) {
      this.logger.warn(
        `chain ${input.chainId}: the node did not say the standard of ${address} (${String(error)}); the indexer asks again`,
      );
    }
    const created = await this.em.fork().transactional(async (em) => {
      await queryRows(em, `select pg_advisory_xact_lock(hashtextextended(?, 0))`, [LOCK_NAMES.contractIndex(organizationId)]);
      const count = await this.contracts.countFor(em, organizationId);
      const row = await this.contracts.insert(em, {
        organizationId,
        chainId: input.chainId,
        address,
        fromBlock: input.fromBlock,
        standard,
        standardKnown,
      });
      if (row === null) {
        throw conflict(
          'CONTRACT_ALREADY_INDEXED',
          `Contract ${input.address} on chain ${input.chainId} is already indexed by this organization.`,
        );
      }
      if (count >= MAX_CONTRACTS_PER_ORGANIZATION) {
        throw unprocessable(
          'CONTRACT_LIMIT_REACHED',
          `An organization indexes at most ${MAX_CONTRACTS_PER_ORGANIZATION} contracts; delete one before registering another.`,
        );
      }
      return row;
    });
    this.indexers.wake(input.chainId);
    return created;
  }

  async get(organizationId: string, id: string): Promise<IndexedContract> {
    const contract = await this.contracts.find(organizationId, id);
    if (!contract) throw notFound('CONTRACT_NOT_FOUND', `Contract ${id} is not indexed by this organization.`);
    return contract;
  }

  async list(organizationId: string, pageSize: number, pageKey?: string): Promise<Page<IndexedContract>> {
    const after = pageKey === undefined ? null : (decodePageKey(pageKey, ['uuid'])[0] as string).toLowerCase();
    const rows = await this.contracts.page(organizationId, after, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!(await this.contracts.delete(organizationId, id))) {
      throw notFound('CONTRACT_NOT_FOUND', `Contract ${id} is not indexed by this organization.`);
    }
  }
}
