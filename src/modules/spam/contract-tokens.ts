import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * What the spam module needs of the module that owns tokens: the tokens of a chain contract, to
 * tell each organization whose view of the contract changed. The application wires the owner in
 * (SpamModule.forRoot), so the spam module, which the tokens module reads, never imports it.
 */
export abstract class ContractTokens {
  /** The tokens of a chain contract (of one organization when given), by organization. */
  abstract chainTokensOf(
    em: EntityManager,
    chainId: number,
    contractAddress: string,
    organizationId?: string,
  ): Promise<{ id: string; organizationId: string }[]>;
}
