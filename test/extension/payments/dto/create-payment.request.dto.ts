import { IsOptional, IsString, IsUUID, Matches, MaxLength } from 'class-validator';

export class CreatePaymentRequestDto {
  /** The organization's wallet the payment is for. */
  @IsUUID()
  walletId: string;

  /**
   * Amount in the smallest unit, a decimal string of up to 78 digits.
   * @example "250"
   */
  @IsString()
  @Matches(/^(0|[1-9][0-9]{0,77})$/, { message: 'must be a decimal string of a non-negative integer (up to 78 digits)' })
  amount: string;

  /** The integrator's own reference for the payment. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  reference?: string;
}
