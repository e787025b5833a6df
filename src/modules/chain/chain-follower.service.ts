import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AppConfig, runsFollowers } from '../../config/app-config';
import { ChainMovementsService } from '../transactions/chain-movements.service';
import { WalletsService } from '../wallets/wallets.service';
import { ChainClients } from './chain-clients';
import { ChainCursorRepository } from './chain-cursor.repository';
import { ChainFollower } from './chain-follower';
import { ChainNode } from './chain-node';
import { ChainHeads } from './new-heads';
import { WalletSyncRunner } from './wallet-sync.runner';

/**
 * Starts one follower per configured chain in indexer and all processes. Every instance runs
 * them; the lease in chain_cursor lets one per chain work while the others stand by. A chain
 * whose node is reached over ws(s) wakes its follower on every head the node pushes.
 */
@Injectable()
export class ChainFollowerService implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Names this process in the leases it holds (host, pid, and a nonce so a restart is a new owner). */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly followers = new Map<number, ChainFollower>();

  constructor(
    private readonly config: AppConfig,
    private readonly clients: ChainClients,
    private readonly em: EntityManager,
    private readonly cursors: ChainCursorRepository,
    private readonly movements: ChainMovementsService,
    private readonly wallets: WalletsService,
    private readonly syncs: WalletSyncRunner,
    private readonly heads: ChainHeads,
  ) {}

  onApplicationBootstrap(): void {
    if (!runsFollowers(this.config)) return;
    for (const chainId of this.clients.chainIds()) {
      const node = new ChainNode(this.clients.get(chainId));
      const follower = new ChainFollower({
        config: this.config,
        chainId,
        node,
        owner: this.owner,
        em: this.em,
        cursors: this.cursors,
        movements: this.movements,
        wallets: this.wallets,
        whenCaughtUp: (cursor) => this.syncs.step(chainId, node, cursor, this.owner),
        headRead: (head) => this.heads.polled(chainId, head),
      });
      this.followers.set(chainId, follower);
      follower.start();
      this.heads.listen(chainId, () => follower.newHead());
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.followers.values()].map((f) => f.stop()));
  }

  /** Chains whose lease this process holds. */
  leading(): number[] {
    return [...this.followers.entries()].filter(([, f]) => f.leading).map(([chainId]) => chainId);
  }
}
