import { Body, Controller, Get, Headers, Post, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
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
import { CreateTransactionBatchRequestDto } from './dto/create-transaction-batch.request.dto';
import { CreateTransactionRequestDto } from './dto/create-transaction.request.dto';
import { TransactionBatchDto } from './dto/transaction-batch.response.dto';
import { TransactionDto } from './dto/transaction.response.dto';
import { IDEMPOTENCY_KEY_SCHEMA, isValidIdempotencyKey } from './transaction.rules';
import { TransactionsService } from './transactions.service';

@ApiTags('Transactions')
@Controller('v1/transactions')
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Post()
  @Auth('write')
  @ApiOperation({
    operationId: 'createTransaction',
    summary: 'Record an NFT mint, transfer or burn (emits transaction / Transaction / create)',
    description:
      'No fromWalletId mints, no toWalletId burns. amount defaults to "1". Tokens with a chainId are moved only by the ' +
      'followed chain (422 CHAIN_MANAGED).',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { ...IDEMPOTENCY_KEY_SCHEMA },
    description:
      'Retry-safe key (1-255 printable ASCII characters). The same key and request within 24 h return the first ' +
      'answer and record nothing new; the same key with a different request is a 422 IDEMPOTENCY_KEY_REUSED. ' +
      'Only successful answers are remembered: a refused request leaves the key free.',
  })
  @ApiCreatedResponse({ type: TransactionDto, description: 'Recorded (or, for a repeated Idempotency-Key, the first answer).' })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND or WALLET_NOT_FOUND.' })
  @ApiUnprocessableEntityResponse({
    description:
      'INSUFFICIENT_BALANCE or BALANCE_OVERFLOW (nothing changes), CHAIN_MANAGED (the token has a chainId: only the followed ' +
      'chain moves it; nothing changes) or IDEMPOTENCY_KEY_REUSED.',
  })
  async create(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: CreateTransactionRequestDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TransactionDto> {
    assertIdempotencyKey(idempotencyKey);
    const recorded = await this.transactions.create(key.organizationId, body, idempotencyKey);
    if (recorded.replayed) res.setHeader('idempotent-replayed', 'true');
    return recorded.transaction;
  }

  @Post('batch')
  @Auth('write')
  @ApiOperation({
    operationId: 'createTransactionBatch',
    summary: 'Record up to 1,000 mints, transfers and burns at once, all or nothing',
    description:
      'Each item is a body of POST /v1/transactions. Every item is validated first: malformed items answer 400 ' +
      'VALIDATION_FAILED with `errors: [{index, field, message}]` listing every bad item. The movements then apply in ' +
      'request order, each seeing the balances the earlier ones left; the first movement that would be refused ' +
      '(404 TOKEN_NOT_FOUND / WALLET_NOT_FOUND, 422 INSUFFICIENT_BALANCE / CHAIN_MANAGED) answers alone with its `index` in `errors`, ' +
      'and nothing is recorded. On success every item is its own transaction and emits its own ' +
      'transaction / Transaction / create webhook.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { ...IDEMPOTENCY_KEY_SCHEMA },
    description:
      'Covers the whole batch: the same key and the same items (in the same order) within 24 h return the first ' +
      'answer and record nothing new; the same key with different items is a 422 IDEMPOTENCY_KEY_REUSED.',
  })
  @ApiCreatedResponse({ type: TransactionBatchDto, description: 'Every item recorded, in request order.' })
  @ApiBadRequestResponse({ description: 'VALIDATION_FAILED: `errors` lists `{index, field, message}` for every bad item.' })
  @ApiNotFoundResponse({ description: 'TOKEN_NOT_FOUND or WALLET_NOT_FOUND for the item at `errors[0].index`; nothing recorded.' })
  @ApiUnprocessableEntityResponse({
    description:
      'INSUFFICIENT_BALANCE, BALANCE_OVERFLOW or CHAIN_MANAGED (a token followed on chain) for the item at `errors[0].index` ' +
      '(nothing recorded), ' +
      'or IDEMPOTENCY_KEY_REUSED.',
  })
  async createBatch(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: CreateTransactionBatchRequestDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TransactionBatchDto> {
    assertIdempotencyKey(idempotencyKey);
    const recorded = await this.transactions.createBatch(key.organizationId, body.transactions, idempotencyKey);
    if (recorded.replayed) res.setHeader('idempotent-replayed', 'true');
    return { transactions: recorded.transactions };
  }

  @Get(':transactionId')
  @Auth('read')
  @ApiOperation({ operationId: 'getTransaction', summary: 'Get one transaction' })
  @ApiOkResponse({ type: TransactionDto })
  @ApiNotFoundResponse({ description: 'TRANSACTION_NOT_FOUND: unknown, or another organization’s.' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('transactionId') transactionId: string): Promise<TransactionDto> {
    return TransactionDto.from(await this.transactions.get(key.organizationId, transactionId));
  }
}

function assertIdempotencyKey(idempotencyKey: string | undefined): void {
  if (idempotencyKey !== undefined && !isValidIdempotencyKey(idempotencyKey)) {
    throw badRequest('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.', [
      { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters without spaces' },
    ]);
  }
}
