import { Injectable } from '@nestjs/common';
import { zeroAddress } from 'viem';
import { conflict, unprocessable } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { WalletsService } from '../wallets/wallets.service';
import { ChainCursorRepository } from './chain-cursor.repository';
import { WalletSync, WalletSyncRepository } from './wallet-sync.repository';
import { MAX_OPEN_SYNCS_PER_ORGANIZATION, syncRangeRefusal } from './wallet-sync.rules';

/** Requests for replays of a wallet's history (POST /v1/wallets/{walletId}/sync); the follower runs them. */
@Injectable()
export class WalletSyncService {
  constructor(
    private readonly config: AppConfig,
    private readonly cursors: ChainCursorRepository,
    private readonly syncs: WalletSyncRepository,
    private readonly wallets: WalletsService,
  ) {}

  /**
   * Asks for a replay of a wallet's history on a chain from `fromBlock`. The same request while
   * it is open answers that one; another start block for the same wallet and chain waits until
   * it ends (409), and an organization has at most MAX_OPEN_SYNCS_PER_ORGANIZATION open (422).
   */
  async request(organizationId: string, walletId: string, chainId: number, fromBlock: number): Promise<WalletSync> {
    const address = await this.wallets.walletAddress(organizationId, walletId);
    if (!this.config.chain.rpcUrls.some((rpc) => rpc.chainId === chainId)) {
      throw unprocessable('UNKNOWN_CHAIN', `Chain ${chainId} is not followed by this service.`);
    }
    if (address === null) {
      throw unprocessable('WALLET_HAS_NO_ADDRESS', `Wallet ${walletId} has no address, so it has no history on a chain.`);
    }
    // Wallets are no longer created there, but one made earlier would match every mint and burn.
    if (address === zeroAddress) {
      throw unprocessable('WALLET_HAS_NO_ADDRESS', `Wallet ${walletId} is at the zero address, which has no history of its own.`);
    }
    const cursor = await this.cursors.find(chainId);
    const refusal = syncRangeRefusal(cursor?.appliedBlock ?? null, fromBlock);
    if (refusal !== null) throw unprocessable('SYNC_RANGE_TOO_LARGE', refusal);
    const outcome = await this.syncs.request({ organizationId, walletId, chainId, address, fromBlock });
    switch (outcome.kind) {
      case 'created':
      case 'existing':
        return outcome.sync;
      case 'inProgress':
        throw conflict(
          'SYNC_IN_PROGRESS',
          `Wallet ${walletId} has an open sync on chain ${chainId} from block ${outcome.sync.fromBlock} (${outcome.sync.id}); ` +
            'ask again with that fromBlock to follow it, or once it has ended for another.',
        );
      case 'limitReached':
        throw unprocessable(
          'SYNC_LIMIT_REACHED',
          `An organization has at most ${MAX_OPEN_SYNCS_PER_ORGANIZATION} open (pending or running) syncs; ask again once one has ended.`,
        );
    }
  }
}
