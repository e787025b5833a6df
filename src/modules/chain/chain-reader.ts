import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppConfig } from '../../config/app-config';

/**
 * What every leased reader of one chain shares (the wallet follower and the whole-contract
 * indexers), beside the timing in following-timing.ts.
 */

/** A step met a changing chain (or a refused range): no node failure, it runs again after RETRY_MS. */
export class Retry extends Error {}

/** What a reader of one chain is given: the chain, the name it holds leases under, and the database. */
export interface ChainReaderDeps {
  config: AppConfig;
  chainId: number;
  owner: string;
  em: EntityManager;
}
