import { Injectable } from '@nestjs/common';
import { parseAddress } from '../../common/evm-address';
import { decodePageKey, encodePageKey } from '../../common/pagination/page-key';
import { Page, toPage } from '../../common/pagination/page-query.dto';
import { walletNotFound } from '../wallets/wallets.service';
import { BalanceRepository, HeldToken } from './balance.repository';

@Injectable()
export class BalancesService {
  constructor(private readonly balances: BalanceRepository) {}

  /** Keyset pagination on tokenId: a page never skips or repeats a token while balances change. */
  async walletBalances(
    organizationId: string,
    walletId: string,
    query: { pageSize: number; pageKey?: string; contractAddress?: string[] },
  ): Promise<Page<HeldToken>> {
    const afterTokenId = query.pageKey ? (decodePageKey(query.pageKey, ['uuid'])[0] as string).toLowerCase() : null;
    const contractAddresses = query.contractAddress
      ? [...new Set(query.contractAddress.map((address) => parseAddress(address, 'contractAddress')))]
      : null;
    const rows = await this.balances.walletPage({
      organizationId,
      walletId,
      afterTokenId,
      contractAddresses,
      limit: query.pageSize + 1,
    });
    if (rows === null) throw walletNotFound(walletId);
    return toPage(rows, query.pageSize, (last) => encodePageKey([last.tokenId]));
  }
}
