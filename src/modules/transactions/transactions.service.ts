import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { DomainError, FieldError, notFound, unprocessable, validationFailed } from '../../common/errors/domain-error';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { queryRows } from '../../database/raw-sql';
import { tokenNotFound, TokensService } from '../tokens/tokens.service';
import { walletNotFound, WalletsService } from '../wallets/wallets.service';
import type { CreateTransactionRequestDto } from './dto/create-transaction.request.dto';
import { TransactionDto } from './dto/transaction.response.dto';
import { NftTransaction } from './nft-transaction.entity';
import { NftTransactionRepository } from './nft-transaction.repository';
import { BalanceRepository } from './balance.repository';
import { creditFits } from './balance.rules';
import { balanceKey, BatchMovement, batchFingerprint, planBatch } from './transaction-batch.rules';
import { validateBatchItems } from './transaction-batch.validation';
import {
  DEFAULT_AMOUNT,
  IDEMPOTENCY_WINDOW_HOURS,
  MovementRequest,
  chainManagedMessage,
  requestFingerprint,
  transactionType,
} from './transaction.rules';
import { transactionCreated } from '../domain-events/domain-event.catalogue';

const IDEMPOTENCY_SCOPE = 'POST /v1/transactions';
const BATCH_IDEMPOTENCY_SCOPE = 'POST /v1/transactions/batch';

export interface RecordedTransaction {
  transaction: TransactionDto;
  /** True when this answer is the stored first answer of an earlier request with the same key. */
  replayed: boolean;
}

export interface RecordedBatch {
  transactions: TransactionDto[];
  replayed: boolean;
}

type Claim<T> = { kind: 'claimed' } | { kind: 'replay'; body: T } | { kind: 'mismatch' };

const keyReused = () =>
  unprocessable('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request in the last 24 hours.');

@Injectable()
export class TransactionsService {
  constructor(
    private readonly em: EntityManager,
    private readonly transactions: NftTransactionRepository,
    private readonly balances: BalanceRepository,
    private readonly tokens: TokensService,
    private readonly wallets: WalletsService,
    private readonly events: DomainEventPublisher,
  ) {}

  /**
   * Records a mint, transfer or burn. Everything (idempotency claim, balances, transaction row,
   * domain event) commits in one database transaction or not at all.
   */
  async create(organizationId: string, input: CreateTransactionRequestDto, idempotencyKey?: string): Promise<RecordedTransaction> {
    const request: MovementRequest = {
      tokenId: input.tokenId.toLowerCase(),
      fromWalletId: input.fromWalletId?.toLowerCase() ?? null,
      toWalletId: input.toWalletId?.toLowerCase() ?? null,
      amount: input.amount ?? DEFAULT_AMOUNT,
    };
    const kind = transactionType(request.fromWalletId, request.toWalletId);
    if ('errors' in kind) throw validationFailed(kind.errors);

    return this.em.transactional(async (em) => {
      if (idempotencyKey !== undefined) {
        const claim = await this.claimIdempotencyKey<TransactionDto>(
          em,
          organizationId,
          IDEMPOTENCY_SCOPE,
          idempotencyKey,
          requestFingerprint(request),
        );
        if (claim.kind === 'replay') return { transaction: claim.body, replayed: true };
        if (claim.kind === 'mismatch') throw keyReused();
      }

      // Plain statements, no entities loaded: the unit of work would have nothing to do but compute
      // change sets for rows that are only checked or written once.
      const token = (await this.tokens.existingInTransaction(em, organizationId, [request.tokenId])).get(request.tokenId);
      if (token === undefined) throw tokenNotFound(request.tokenId);
      if (token.chainId !== null) throw unprocessable('CHAIN_MANAGED', chainManagedMessage(request.tokenId));
      const { contractAddress } = token;
      const parties = [request.fromWalletId, request.toWalletId].filter((id): id is string => id !== null);
      const known = await this.wallets.existingInTransaction(em, organizationId, parties);
      const missing = parties.find((id) => !known.has(id));
      if (missing !== undefined) throw walletNotFound(missing);
      await this.moveBalances(em, organizationId, request);

      const transaction = new NftTransaction({ organizationId, type: kind.type, ...request });
      await em.getRepository(NftTransaction).insertRows([transaction]);
      await this.events.publishMany(em, organizationId, [transactionCreated(transaction.id, contractAddress)]);
      const answer = TransactionDto.from(transaction);
      if (idempotencyKey !== undefined) await this.rememberAnswer(em, organizationId, IDEMPOTENCY_SCOPE, idempotencyKey, answer);
      return { transaction: answer, replayed: false };
    });
  }

  /**
   * Records up to MAX_BATCH_SIZE movements all or nothing, in one database transaction, with set
   * statements whose count does not grow with the batch: existence of every token and wallet in
   * two lookups, every touched balance row locked (or created at zero) in one ordered statement,
   * the movements replayed in memory in request order (planBatch), then one statement per kind of
   * write. The locks make the in-memory replay exact: no other write can change those rows before
   * commit.
   */
  async createBatch(organizationId: string, items: unknown[], idempotencyKey?: string): Promise<RecordedBatch> {
    const validated = validateBatchItems(items);
    if ('errors' in validated) throw batchValidationFailed(validated.errors);
    const { movements } = validated;

    return this.em.transactional(async (em) => {
      if (idempotencyKey !== undefined) {
        const claim = await this.claimIdempotencyKey<TransactionDto[]>(
          em,
          organizationId,
          BATCH_IDEMPOTENCY_SCOPE,
          idempotencyKey,
          batchFingerprint(movements),
        );
        if (claim.kind === 'replay') return { transactions: claim.body, replayed: true };
        if (claim.kind === 'mismatch') throw keyReused();
      }

      const tokenIds = unique(movements.map((m) => m.tokenId));
      const walletIds = unique(movements.flatMap((m) => [m.fromWalletId, m.toWalletId]).filter((id): id is string => id !== null));
      const [knownTokens, knownWallets] = [
        await this.tokens.existingInTransaction(em, organizationId, tokenIds),
        await this.wallets.existingInTransaction(em, organizationId, walletIds),
      ];
      // Only rows of known wallets and tokens can exist; planBatch refuses the others in request
      // order, and chain tokens too (the batch never even locks their rows).
      const pairs = unique(
        movements
          .filter((m) => knownTokens.get(m.tokenId)?.chainId === null)
          .flatMap((m) =>
            [m.fromWalletId, m.toWalletId]
              .filter((w): w is string => w !== null && knownWallets.has(w))
              .map((w) => balanceKey(w, m.tokenId)),
          ),
      );
      // Rows the batch only credits (a mint-only batch: all of them) take their credit while being
      // locked, so they are written once; rows it debits are replayed in request order first.
      const credits = creditOnlyTotals(movements, pairs);
      const chainManaged = new Set([...knownTokens].filter(([, token]) => token.chainId !== null).map(([tokenId]) => tokenId));
      const locked = await this.balances.lockOrCreate(em, organizationId, pairs, credits);
      const plan = planBatch(movements, knownTokens, knownWallets, locked, chainManaged);
      if ('refusal' in plan) {
        const { index, status, code, field, message } = plan.refusal;
        throw new DomainError(status, code, `transactions[${index}]: ${message}`, [{ index, field, message }]);
      }
      await this.balances.applyChanges(
        em,
        plan.changes
          .filter((change) => !credits.has(balanceKey(change.walletId, change.tokenId)))
          .map((change) => ({ ...change, organizationId })),
        locked,
      );

      const rows = movements.map((m) => new NftTransaction({ organizationId, ...m }));
      await em.getRepository(NftTransaction).insertRows(rows);
      await this.events.publishMany(
        em,
        organizationId,
        rows.map((row) => transactionCreated(row.id, knownTokens.get(row.tokenId)?.contractAddress ?? null)),
      );
      const answer = rows.map((row) => TransactionDto.from(row));
      if (idempotencyKey !== undefined) await this.rememberAnswer(em, organizationId, BATCH_IDEMPOTENCY_SCOPE, idempotencyKey, answer);
      return { transactions: answer, replayed: false };
    });
  }

  /** The organization's transactions among `ids`. */
  findMany(organizationId: string, ids: readonly string[]): Promise<NftTransaction[]> {
    return this.em.find(NftTransaction, { organizationId, id: { $in: [...ids] } });
  }

  async get(organizationId: string, transactionId: string): Promise<NftTransaction> {
    const transaction = await this.transactions.findInOrganization(organizationId, transactionId);
    if (!transaction) throw notFound('TRANSACTION_NOT_FOUND', `Transaction ${transactionId} does not exist.`);
    return transaction;
  }

  /** Moves the units through the ledger's one writer; its refusal becomes the answer. */
  private async moveBalances(em: EntityManager, organizationId: string, request: MovementRequest): Promise<void> {
    const refusal = await this.balances.move(em, organizationId, request);
    if (refusal?.code === 'INSUFFICIENT_BALANCE') {
      throw unprocessable(
        'INSUFFICIENT_BALANCE',
        `Wallet ${refusal.walletId} holds less than ${request.amount} of token ${request.tokenId}.`,
      );
    }
    if (refusal?.code === 'BALANCE_OVERFLOW') {
      throw unprocessable('BALANCE_OVERFLOW', `Wallet ${refusal.walletId} would hold more than 2^256-1 of token ${request.tokenId}.`);
    }
  }

  /**
   * Claims the key inside the request's own transaction. A concurrent request with the same key
   * blocks on the primary key until this one commits (then it replays this answer) or rolls back
   * (then it claims the key itself). A key older than the window is taken over as new.
   */
  private async claimIdempotencyKey<T>(
    em: EntityManager,
    organizationId: string,
    scope: string,
    key: string,
    requestHash: string,
  ): Promise<Claim<T>> {
    const claimed = await queryRows(
      em,
      `insert into "idempotency_key" ("organization_id", "scope", "key", "request_hash", "response_status", "response_body", "created_at")
       values (?, ?, ?, ?, null, null, now())
       on conflict ("organization_id", "scope", "key") do update
         set "request_hash" = excluded."request_hash", "response_status" = null, "response_body" = null,
             "created_at" = excluded."created_at"
         where "idempotency_key"."created_at" < now() - make_interval(hours => ?)
       returning 1`,
      [organizationId, scope, key, requestHash, IDEMPOTENCY_WINDOW_HOURS],
    );
    if (claimed.length > 0) return { kind: 'claimed' };
    const [stored] = await queryRows<{ request_hash: string; response_body: T | null }>(
      em,
      `select "request_hash", "response_body" from "idempotency_key"
        where "organization_id" = ? and "scope" = ? and "key" = ?`,
      [organizationId, scope, key],
    );
    if (!stored || stored.request_hash !== requestHash || stored.response_body === null) return { kind: 'mismatch' };
    return { kind: 'replay', body: stored.response_body };
  }

  private async rememberAnswer(em: EntityManager, organizationId: string, scope: string, key: string, answer: unknown): Promise<void> {
    await queryRows(
      em,
      `update "idempotency_key" set "response_status" = 201, "response_body" = ?::jsonb
        where "organization_id" = ? and "scope" = ? and "key" = ?`,
      [JSON.stringify(answer), organizationId, scope, key],
    );
  }
}

/** Total credit per balance row that no movement of the batch debits, for rows in `pairs`. */
function creditOnlyTotals(movements: BatchMovement[], pairs: string[]): Map<string, bigint> {
  const locked = new Set(pairs);
  const debited = new Set(movements.filter((m) => m.fromWalletId !== null).map((m) => balanceKey(m.fromWalletId!, m.tokenId)));
  const credits = new Map<string, bigint>();
  for (const m of movements) {
    if (m.toWalletId === null) continue;
    const key = balanceKey(m.toWalletId, m.tokenId);
    if (locked.has(key) && !debited.has(key)) credits.set(key, (credits.get(key) ?? 0n) + BigInt(m.amount));
  }
  // A total past 2^256-1 cannot be written at all: such a row is only locked, and the replay
  // finds the movement that overflows it.
  for (const [key, total] of credits) if (!creditFits(0n, total)) credits.delete(key);
  return credits;
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

function batchValidationFailed(errors: FieldError[]): DomainError {
  const first = errors[0];
  const bad = new Set(errors.map((e) => e.index)).size;
  return new DomainError(
    400,
    'VALIDATION_FAILED',
    `${bad} item(s) of the batch are not valid; first: transactions[${first.index}].${first.field}: ${first.message}`,
    errors,
  );
}
