import { ApiProperty } from '@nestjs/swagger';
import { TransactionDto } from './transaction.response.dto';

export class WalletTransfersPageDto {
  @ApiProperty({
    type: [TransactionDto],
    description: 'Newest first by (createdAtUtc, id); each exactly as GET /v1/transactions/{id} answers it.',
  })
  transfers: TransactionDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Key of the next page; null on the last page.' })
  nextPageKey: string | null;
}
