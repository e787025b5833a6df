import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { type SpamFilter } from '../../spam/spam-filter';
import { AsOfQuery, SpamFilterQuery } from './holding-query-params';

export class WalletCollectionsQueryDto extends PageQueryDto {
  @AsOfQuery(
    'Holdings at this instant, exactly as nft-balances with the same asOf lists them. ISO 8601 with an offset; encode `+` as `%2B`.',
  )
  asOf?: string;

  @SpamFilterQuery('`exclude` leaves out spam collections, `only` keeps only them (API-recorded tokens are not spam).')
  spam?: SpamFilter;
}
