import { Entity, EntityRepositoryType, PrimaryKey, PrimaryKeyProp, Property } from '@mikro-orm/core';
import { BalanceRepository } from './balance.repository';

/**
 * What a wallet holds of a token. Amounts change only through BalanceRepository (its one lock
 * order, its cap of 2^256-1), never through a loaded entity, so concurrent movements cannot
 * overdraw. Rows that reach zero stay and are filtered out by `amount > 0`.
 */
@Entity({ tableName: 'balance', repository: () => BalanceRepository })
export class Balance {
  [EntityRepositoryType]?: BalanceRepository;
  [PrimaryKeyProp]?: ['walletId', 'tokenId'];

  @PrimaryKey({ type: 'uuid' })
  walletId: string;

  @PrimaryKey({ type: 'uuid' })
  tokenId: string;

  @Property({ type: 'uuid' })
  organizationId: string;

  @Property({ type: 'string', columnType: 'numeric(78,0)' })
  amount: string;

  @Property({ type: 'timestamptz', length: 6 })
  updatedAt: Date;
}
