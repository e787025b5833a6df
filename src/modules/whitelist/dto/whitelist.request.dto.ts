import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean } from 'class-validator';
import { EVM_ADDRESS_PATTERN } from '../../../common/evm-address';

export class UpdateNftWhitelistDto {
  /** True hides every NFT whose contract is not on the whitelist; false shows all NFTs again. */
  @IsBoolean()
  enabled: boolean;
}

export class AddWhitelistContractsDto {
  /**
   * 1 to 1,000 contract addresses, lowercase, uppercase hex or EIP-55. Addresses already on the
   * whitelist and repeats within the request are not errors. One invalid entry rejects the whole
   * request and nothing is added.
   */
  @ApiProperty({
    type: 'array',
    items: { type: 'string', pattern: EVM_ADDRESS_PATTERN },
    minItems: 1,
    maxItems: 1000,
    example: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  contractAddresses: string[];
}
