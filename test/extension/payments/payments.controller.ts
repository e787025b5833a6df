import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../../src/common/auth/access';
import { CurrentKey } from '../../../src/common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../../src/common/auth/principal';
import { UuidParam } from '../../../src/common/http/uuid-param';
import { CreatePaymentRequestDto } from './dto/create-payment.request.dto';
import { PaymentDto } from './dto/payment.response.dto';
import { PaymentsService } from './payments.service';

@ApiTags('Payments')
@Controller('v1/payments')
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @Post()
  @Auth('write')
  @ApiOperation({ summary: 'Record a payment to a wallet (emits payment / Payment / create)' })
  @ApiCreatedResponse({ type: PaymentDto })
  async create(@CurrentKey() key: ApiKeyPrincipal, @Body() body: CreatePaymentRequestDto): Promise<PaymentDto> {
    return PaymentDto.from(await this.payments.create(key.organizationId, body));
  }

  @Get(':paymentId')
  @Auth('read')
  @ApiOperation({ summary: 'Get one payment' })
  @ApiOkResponse({ type: PaymentDto })
  @ApiNotFoundResponse({ description: 'PAYMENT_NOT_FOUND: unknown, or another organization’s.' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('paymentId') paymentId: string): Promise<PaymentDto> {
    return PaymentDto.from(await this.payments.get(key.organizationId, paymentId));
  }
}
