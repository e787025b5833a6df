import { ApiProperty } from '@nestjs/swagger';
import { toChecksumAddress } from '../../../common/evm-address';
import { formatUtc } from '../../../common/time';
import type { Wallet } from '../wallet.entity';
import { pick } from '../../../common/pick';

export class WalletDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  organizationId: string;
  @ApiProperty({ type: String, nullable: true, description: 'Label of the wallet; null when none was given.' })
  name: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'EVM address in EIP-55 checksum form; null when none was given.',
    example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  })
  address: string | null;
  @ApiProperty({ example: '2026-11-22T01:25:42.123000+00:00' })
  createdAtUtc: string;

  static from(wallet: Wallet): WalletDto {
    return {
      ...pick(wallet, 'id', 'organizationId', 'name'),
      address: wallet.address === null ? null : toChecksumAddress(wallet.address),
      createdAtUtc: formatUtc(wallet.createdAt),
    };
  }
}

export class WalletPageDto {
  @ApiProperty({ type: [WalletDto] })
  wallets: WalletDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Key of the next page; null on the last page.' })
  nextPageKey: string | null;
}
