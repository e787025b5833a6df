import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { SpamRepository } from './spam.repository';
import { isLureMetadata } from './spam.rules';

/**
 * What the modules that record chain data tell the spam module, on their own transaction (so
 * nothing is judged that did not commit, and nothing that committed is forgotten). Judging runs in
 * the background (SpamWorker): these calls only queue.
 */
@Injectable()
export class SpamInbox {
  constructor(private readonly repository: SpamRepository) {}

  /**
   * The service recorded movements of these chain transactions: each one's whole receipt is
   * judged (massAirdrop), once per (chainId, transactionHash).
   */
  async transactionsRecorded(em: EntityManager, transactions: { chainId: number; transactionHash: string }[]): Promise<void> {
    const unique = new Map(transactions.map((t) => [`${t.chainId}/${t.transactionHash.toLowerCase()}`, t]));
    await this.repository.enqueue(
      em,
      [...unique.values()].map((t) => ({ chainId: t.chainId, kind: 'transaction' as const, subject: t.transactionHash })),
    );
  }

  /** A chain token's metadata was read: when its name and description are a lure, its contract is judged so. */
  async tokenMetadataRead(
    em: EntityManager,
    token: { chainId: number; contractAddress: string; name: string | null; description: string | null },
  ): Promise<void> {
    if (!isLureMetadata(token.name, token.description)) return;
    await this.repository.enqueue(em, [{ chainId: token.chainId, kind: 'lureMetadata', subject: token.contractAddress }]);
  }
}
