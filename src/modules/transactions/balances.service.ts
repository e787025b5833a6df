import { Injectable } from '@nestjs/common';
import { parseAddress } from '../../common/evm-address';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { walletNotFound } from '../wallets/wallets.service';
import { badRequest } from '../../common/errors/domain-error';
import { parseAsOf } from './as-of.rules';
import type { SpamFilter } from '../spam/spam-filter';
import { BalanceRepository, HeldToken } from './balance.repository';

@Injectable()
export class BalancesService {
  constructor(private readonly balances: BalanceRepository) {}

  /** Keyset pagination on tokenId: a page never skips or repeats a token while balances change. */
  async walletBalances(
    organizationId: string,
    walletId: string,
    query: { pageSize: number; pageKey?: string; contractAddress?: string[]; asOf?: string; spam?: SpamFilter },
  ): Promise<Page<HeldToken>> {
    const asOf = query.asOf === undefined ? null : parseAsOf(query.asOf);
    if (query.asOf !== undefined && asOf === null) {
      throw badRequest('VALIDATION_FAILED', 'asOf: must be an ISO 8601 date-time with an offset, e.g. 2026-11-25T10:00:00+00:00', [
        { field: 'asOf', message: 'must be an ISO 8601 date-time with seconds and an offset (Z or ±hh:mm); encode + as %2B' },
      ]);
    }
    const afterTokenId = query.pageKey ? (decodePageKey(query.pageKey, ['uuid'])[0] as string).toLowerCase() : null;
    const contractAddresses = query.contractAddress
      ? [...new Set(query.contractAddress.map((address) => parseAddress(address, 'contractAddress')))]
      : null;
    const page = { organizationId, walletId, afterTokenId, contractAddresses, spam: query.spam, limit: query.pageSize + 1 };
    // Without asOf the current balances answer; with it, the movement ledger at that instant.
    const rows = asOf === null ? await this.balances.walletPage(page) : await this.balances.walletPageAsOf({ ...page, asOf });
    if (rows === null) throw walletNotFound(walletId);
    return toPage(rows, query.pageSize, (last) => encodePageKey([last.tokenId]));
  }
}
