import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { badRequest, validationFailed } from '../../common/errors/domain-error';
import { parseAddress } from '../../common/evm-address';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { outsideTransaction, queryRows } from '../../database/raw-sql';
import { spamFilterSql } from '../spam/spam-filter';
import { walletNotFound } from '../wallets/wallets.service';
import type { WalletTransfersQueryDto } from './dto/wallet-transfers.query.dto';
import { isTransferCursor, parseTransferFilters, TransferCursor } from './wallet-transfers.rules';
import { TransferRow, transferRowsFrom, walletTransfersSql } from './wallet-transfers.sql';

/** A wallet's activity feed: every movement it took part in, newest first. */
@Injectable()
export class WalletTransfersService {
  constructor(private readonly em: EntityManager) {}

  /**
   * Keyset pagination on (createdAt, id) descending: a page never skips or repeats a movement
   * while others are recorded (a movement recorded behind the cursor appears on a later page).
   */
  async walletTransfers(organizationId: string, walletId: string, query: WalletTransfersQueryDto): Promise<Page<TransferRow>> {
    const parsed = parseTransferFilters(query);
    if ('errors' in parsed) throw validationFailed(parsed.errors);
    const contractAddresses = query.contractAddress
      ? [...new Set(query.contractAddress.map((address) => parseAddress(address, 'contractAddress')))]
      : null;
    const sqlQuery = {
      ...parsed.filters,
      organizationId,
      walletId,
      contractAddresses,
      tokenCondition: spamFilterSql(query.spam, 't', 'x."organization_id"'),
      after: query.pageKey === undefined ? null : cursorOf(query.pageKey),
      limit: query.pageSize + 1,
    };
    const { sql, params } = walletTransfersSql(sqlQuery);
    const rows = transferRowsFrom(await queryRows(outsideTransaction(this.em), sql, params));
    if (rows === null) throw walletNotFound(walletId);
    return toPage(rows, query.pageSize, (last) => encodePageKey([last.createdAtUtc, last.id]));
  }
}

function cursorOf(pageKey: string): TransferCursor {
  const [createdAt, id] = decodePageKey(pageKey, ['string', 'uuid']) as [string, string];
  if (!isTransferCursor(createdAt)) throw badRequest('INVALID_PAGE_KEY', 'pageKey is not a key returned by this endpoint.');
  return { createdAt, id: id.toLowerCase() };
}
