import { Injectable } from '@nestjs/common';
import { badRequest, unprocessable } from '../../common/errors/domain-error';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { ChainClients } from '../chain/chain-clients';
import { ChainNode } from '../chain/chain-node';
import {
  blockRefusal,
  decodeHoldersPageKey,
  decodeTransfersPageKey,
  encodeHoldersPageKey,
  encodeTransfersPageKey,
  IndexedTransfer,
  parseBlockBound,
  parsePointInTime,
  PointInTime,
} from './contract-index.rules';
import { ContractReadsRepository, HolderRow, OwnerRow } from './contract-reads.repository';
import { ContractsService } from './contracts.service';
import { IndexedContract } from './indexed-contract.repository';

/** Header reads at most that one `asOf` answer may ask of the node to pin its block exactly. */
const MAX_BISECTION_READS = 40;

export interface HoldersPage extends Page<HolderRow> {
  blockNumber: number;
}

/** Holders, owners and transfers of an indexed contract, at a block of its indexed range. */
@Injectable()
export class ContractReadsService {
  constructor(
    private readonly contracts: ContractsService,
    private readonly reads: ContractReadsRepository,
    private readonly clients: ChainClients,
  ) {}

  async holders(
    organizationId: string,
    id: string,
    query: { atBlock?: string; asOf?: string; pageSize: number; pageKey?: string },
  ): Promise<HoldersPage> {
    const point = parsePointInTime(query.atBlock, query.asOf);
    const key = query.pageKey === undefined ? null : decodeHoldersPageKey(query.pageKey);
    const contract = await this.contracts.get(organizationId, id);
    // The walk stays at the block of its first page, whatever the chain did since.
    const block = key !== null ? key.block : await this.blockOf(contract, point);
    if (key !== null) {
      if (point.kind === 'block' && point.block !== key.block) {
        throw badRequest('INVALID_PAGE_KEY', 'pageKey belongs to a walk at another block than atBlock.');
      }
      const refusal = blockRefusal(key.block, contract);
      if (refusal) throw refusal;
    }
    const rows = await this.reads.holdersPage(contract.id, block, key, query.pageSize + 1);
    const page = toPage(rows, query.pageSize, (last) => encodeHoldersPageKey({ block, amount: last.amount, holder: last.holder }));
    return { ...page, blockNumber: block };
  }

  async owners(
    organizationId: string,
    id: string,
    tokenId: string,
    query: { atBlock?: string; asOf?: string },
  ): Promise<{ blockNumber: number; owners: OwnerRow[] }> {
    const point = parsePointInTime(query.atBlock, query.asOf);
    const contract = await this.contracts.get(organizationId, id);
    const block = await this.blockOf(contract, point);
    return { blockNumber: block, owners: await this.reads.owners(contract.id, tokenId, block) };
  }

  async transfers(
    organizationId: string,
    id: string,
    query: { fromBlock?: string; toBlock?: string; pageSize: number; pageKey?: string },
  ): Promise<Page<IndexedTransfer>> {
    const fromBlock = parseBlockBound(query.fromBlock, 'fromBlock');
    const toBlock = parseBlockBound(query.toBlock, 'toBlock');
    const key = query.pageKey === undefined ? null : decodeTransfersPageKey(query.pageKey);
    const contract = await this.contracts.get(organizationId, id);
    const range = {
      fromBlock: fromBlock ?? contract.fromBlock,
      // The first page's bound holds for the whole walk, so later pages do not grow with the index.
      toBlock: toBlock ?? key?.toBlock ?? contract.indexedBlock,
    };
    const rows = await this.reads.transfersPage(contract.id, range, key, query.pageSize + 1);
    return toPage(rows, query.pageSize, (last) =>
      encodeTransfersPageKey({
        blockNumber: last.blockNumber,
        logIndex: last.logIndex,
        batchIndex: last.batchIndex ?? -1,
        toBlock: range.toBlock,
      }),
    );
  }

  /** The block a holders or owners read answers for. */
  private async blockOf(contract: IndexedContract, point: PointInTime): Promise<number> {
    if (point.kind === 'indexed') return contract.indexedBlock;
    if (point.kind === 'block') {
      const refusal = blockRefusal(point.block, contract);
      if (refusal) throw refusal;
      return point.block;
    }
    const asOf = new Date(point.asOf);
    if (contract.fromBlockTime === null) {
      throw unprocessable(
        'NOT_YET_INDEXED',
        `No block of this contract's index is indexed yet; ask again once block ${contract.fromBlock} is.`,
      );
    }
    if (asOf < contract.fromBlockTime) {
      throw unprocessable(
        'BEFORE_INDEXED_RANGE',
        `${point.asOf} is before block ${contract.fromBlock}, where this contract's index starts.`,
      );
    }
    const { atOrBefore, next } = await this.reads.keptBlocksAround(contract.id, point.asOf);
    const known = Math.min(atOrBefore ?? contract.fromBlock, contract.indexedBlock);
    const upper = Math.min(next ?? contract.indexedBlock + 1, contract.indexedBlock + 1);
    if (upper - known <= 1) return known;
    return this.lastBlockAtOrBefore(contract.chainId, asOf, known, upper);
  }

  /**
   * The last block in [low, high) whose time is at or before `asOf`, given that `low`'s is and
   * that none of them moved the contract (so the holdings are the same at each): bisected on the
   * node's headers. A node that does not answer leaves `low`, whose holdings are the same.
   */
  private async lastBlockAtOrBefore(chainId: number, asOf: Date, low: number, high: number): Promise<number> {
    const node = new ChainNode(this.clients.get(chainId));
    let lo = low;
    let hi = high;
    try {
      for (let reads = 0; hi - lo > 1 && reads < MAX_BISECTION_READS; reads++) {
        const mid = Math.floor((lo + hi) / 2);
        const header = await node.header(mid);
        if (!header) return lo;
        if (header.time <= asOf) lo = mid;
        else hi = mid;
      }
    } catch {
      return lo;
    }
    return lo;
  }
}
