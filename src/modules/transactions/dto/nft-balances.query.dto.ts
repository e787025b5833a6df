import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { type SpamFilter } from '../../spam/spam-filter';
import { AsOfQuery, ContractAddressQuery, MAX_CONTRACT_FILTERS, SpamFilterQuery } from './holding-query-params';

export { MAX_CONTRACT_FILTERS };

export class NftBalancesQueryDto extends PageQueryDto {
  @ContractAddressQuery(`Only tokens of these contracts; repeat the parameter for several (at most ${MAX_CONTRACT_FILTERS}).`)
  contractAddress?: string[];

  @AsOfQuery(
    'Holdings at this instant instead of now: ISO 8601 with seconds and an offset (encode `+` as `%2B`). Read from the ' +
      'movement ledger: API movements count from their createdAtUtc, chain movements from their block time, reverted ' +
      'ones never; a movement at exactly asOf counts. Same shape, paging and whitelist as without it.',
  )
  asOf?: string;

  @SpamFilterQuery(
    '`exclude` leaves out tokens whose `spam.isSpam` is true, `only` keeps only those (a token with `spam: null` is not ' +
      'spam); `include` (the default) filters nothing.',
  )
  spam?: SpamFilter;
}
