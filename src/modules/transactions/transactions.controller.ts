import { Body, Controller, Get, Headers, Post, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../../common/auth/access';
import { CurrentKey } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { badRequest } from '../../common/errors/domain-error';
import { UuidParam } from '../../common/http/uuid-param';
import { CreateTransactionRequestDto } from './dto/create-transaction.request.dto';
import { TransactionDto } from './dto/transaction.response.dto';
import { isValidIdempotencyKey } from './transaction.rules';
import { TransactionsService } from './transactions.service';

@ApiTags('Transactions')
@Controller('v1/transactions')
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Post()
  @Auth('write')
  @ApiOperation({
    summary: 'Record an NFT mint, transfer or burn (emits transaction / Transaction / create)',
    description: 'No fromWalletId mints, no toWalletId burns. amount defaults to "1".',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Retry-safe key (1-255 printable ASCII characters). The same key and request within 24 h return the first ' +
      'answer and record nothing new; the same key with a different request is a 422 IDEMPOTENCY_KEY_REUSED. ' +
      'Only successful answers are remembered: a refused request leaves the key free.',
  })
  @ApiCreatedResponse({ type: TransactionDto, description: 'Recorded (or, for a repeated Idempotency-Key, the first answer).' })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND or WALLET_NOT_FOUND.' })
  @ApiUnprocessableEntityResponse({ description: 'INSUFFICIENT_BALANCE (nothing changes) or IDEMPOTENCY_KEY_REUSED.' })
  async create(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: CreateTransactionRequestDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TransactionDto> {
    if (idempotencyKey !== undefined && !isValidIdempotencyKey(idempotencyKey)) {
      throw badRequest('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.', [
        { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters without spaces' },
      ]);
    }
    const recorded = await this.transactions.create(key.organizationId, body, idempotencyKey);
    if (recorded.replayed) res.setHeader('idempotent-replayed', 'true');
    return recorded.transaction;
  }

  @Get(':transactionId')
  @Auth('read')
  @ApiOperation({ summary: 'Get one transaction' })
  @ApiOkResponse({ type: TransactionDto })
  @ApiNotFoundResponse({ description: 'TRANSACTION_NOT_FOUND: unknown, or another organization’s.' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('transactionId') transactionId: string): Promise<TransactionDto> {
    return TransactionDto.from(await this.transactions.get(key.organizationId, transactionId));
  }
}
