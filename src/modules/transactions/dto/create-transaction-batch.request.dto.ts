import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray } from 'class-validator';
import { MAX_BATCH_SIZE } from '../transaction-batch.rules';
import { CreateTransactionRequestDto } from './create-transaction.request.dto';

/**
 * Items are checked one by one by the service (not by the global pipe) so that a bad item is
 * reported with its `index`, and every bad item at once.
 */
export class CreateTransactionBatchRequestDto {
  @ApiProperty({
    type: [CreateTransactionRequestDto],
    minItems: 1,
    maxItems: MAX_BATCH_SIZE,
    description: 'Movements applied in this order, each as the body of POST /v1/transactions.',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_SIZE)
  transactions: unknown[];
}
