import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { badRequest } from '../../common/errors/domain-error';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { walletNotFound } from '../wallets/wallets.service';
import { parseAsOf } from './as-of.rules';
import type { WalletCollectionsQueryDto } from './dto/wallet-collections.query.dto';
import { CollectionRow, collectionRowsFrom, walletCollectionsSql } from './wallet-collections.sql';

const ADDRESS = /^0x[0-9a-f]{40}$/;

/** A wallet's holdings grouped by (chain, contract). */
@Injectable()
export class WalletCollectionsService {
  constructor(private readonly em: EntityManager) {}

  async walletCollections(organizationId: string, walletId: string, query: WalletCollectionsQueryDto): Promise<Page<CollectionRow>> {
    const asOf = query.asOf === undefined ? null : parseAsOf(query.asOf);
    if (query.asOf !== undefined && asOf === null) {
      throw badRequest('VALIDATION_FAILED', 'asOf: must be an ISO 8601 date-time with an offset, e.g. 2026-11-25T10:00:00+00:00', [
        { field: 'asOf', message: 'must be an ISO 8601 date-time with seconds and an offset (Z or ±hh:mm); encode + as %2B' },
      ]);
    }
    const { sql, params } = walletCollectionsSql({
      organizationId,
      walletId,
      asOf,
      spam: query.spam,
      after: query.pageKey === undefined ? null : cursorOf(query.pageKey),
      limit: query.pageSize + 1,
    });
    const rows = collectionRowsFrom(await queryRows(outsideTransaction(this.em), sql, params));
    if (rows === null) throw walletNotFound(walletId);
    return toPage(rows, query.pageSize, (last) => encodePageKey([last.contractAddress, last.chainKey]));
  }
}

function cursorOf(pageKey: string): { contractAddress: string; chainKey: number } {
  const [contractAddress, chainKey] = decodePageKey(pageKey, ['string', 'number']) as [string, number];
  if (!ADDRESS.test(contractAddress) || !Number.isSafeInteger(chainKey) || chainKey < -1) {
    throw badRequest('INVALID_PAGE_KEY', 'pageKey is not a key returned by this endpoint.');
  }
  return { contractAddress, chainKey };
}
