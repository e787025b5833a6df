import { EntityRepository } from '@mikro-orm/postgresql';
import type { NftTransaction } from './nft-transaction.entity';

export class NftTransactionRepository extends EntityRepository<NftTransaction> {
  findInOrganization(organizationId: string, id: string): Promise<NftTransaction | null> {
    return this.findOne({ organizationId, id });
  }
}
