import { ApiProperty } from '@nestjs/swagger';
import { SPAM_RULES, SPAM_SOURCES, type SpamRule, type SpamSource } from '../spam.rules';

/** A contract's spam classification as one organization sees it (all tokens of the contract show the same). */
export class SpamDto {
  @ApiProperty({ description: "The organization's override when it set one, else whether any rule fired." })
  isSpam: boolean;
  @ApiProperty({
    enum: SPAM_RULES,
    isArray: true,
    description:
      'The rules that fired, in this order: `massAirdrop` (one chain transaction moved the contract’s tokens to 50 or more ' +
      'distinct recipients besides its sender and the zero address), `lureMetadata` (a token’s name and description hold a URL ' +
      'and a word such as claim, reward, airdrop, visit, redeem or voucher). Listed even when an override decides isSpam.',
  })
  reasons: SpamRule[];
  @ApiProperty({ enum: SPAM_SOURCES, description: '`organization` when the organization’s override decides isSpam, else `rules`.' })
  source: SpamSource;
}
