import { ApiProperty } from '@nestjs/swagger';
import { TransactionDto } from './transaction.response.dto';

export class TransactionBatchDto {
  @ApiProperty({ type: [TransactionDto], description: 'One recorded transaction per item, in request order.' })
  transactions: TransactionDto[];
}
