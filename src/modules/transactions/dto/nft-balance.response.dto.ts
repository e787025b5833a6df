import { ApiProperty } from '@nestjs/swagger';
import { TokenDto } from '../../tokens/dto/token.response.dto';
import type { MediaLinks } from '../../media/media-links';
import type { HeldToken } from '../balance.repository';

export class NftTokenBalanceDto {
  @ApiProperty({ format: 'uuid' })
  tokenId: string;
  @ApiProperty({ description: 'Amount held: a decimal string, always greater than zero.', example: '1' })
  amount: string;
  @ApiProperty({ type: TokenDto })
  token: TokenDto;

  static from(held: HeldToken, links: MediaLinks): NftTokenBalanceDto {
    return { tokenId: held.tokenId, amount: held.amount, token: TokenDto.from(held.token, links) };
  }
}

export class NftBalancesPageDto {
  @ApiProperty({ type: [NftTokenBalanceDto] })
  nftTokenBalances: NftTokenBalanceDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Key of the next page; null on the last page.' })
  nextPageKey: string | null;
}
