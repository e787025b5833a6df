import { ApiProperty } from '@nestjs/swagger';
import { formatUtc } from '../../../../src/common/time';
import type { Payment } from '../payment.entity';

export class PaymentDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ format: 'uuid' })
  walletId: string;
  @ApiProperty({ example: '250' })
  amount: string;
  @ApiProperty({ type: String, nullable: true })
  reference: string | null;
  @ApiProperty({ example: '2026-11-22T01:25:42.123000+00:00' })
  createdAtUtc: string;

  static from(payment: Payment): PaymentDto {
    return {
      id: payment.id,
      walletId: payment.walletId,
      amount: payment.amount,
      reference: payment.reference,
      createdAtUtc: formatUtc(payment.createdAt),
    };
  }
}
