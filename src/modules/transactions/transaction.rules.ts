import { createHash } from 'node:crypto';
import { FieldError } from '../../common/errors/domain-error';

/** nftDeposit and nftWithdrawal come only from a chain: one side is an address outside the organization. */
export const TRANSACTION_TYPES = ['nftMint', 'nftTransfer', 'nftBurn', 'nftDeposit', 'nftWithdrawal'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
/** The types a movement recorded through the API can have. */
export type ApiTransactionType = 'nftMint' | 'nftTransfer' | 'nftBurn';

export const DEFAULT_AMOUNT = '1';

/** How long a client may retry under the same Idempotency-Key and get the first answer back. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;
/** Printable ASCII without spaces, as sent by common clients (UUIDs, ULIDs, random tokens). */
/** 1 to 255 printable ASCII characters without spaces; the OpenAPI document states the same. */
export const IDEMPOTENCY_KEY_SCHEMA = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' } as const;
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface MovementRequest {
  tokenId: string;
  fromWalletId: string | null;
  toWalletId: string | null;
  amount: string;
}

/** No sender means a mint, no receiver a burn; one of them is required and they must differ. */
export function transactionType(
  fromWalletId: string | null,
  toWalletId: string | null,
): { type: ApiTransactionType } | { errors: FieldError[] } {
  if (fromWalletId === null && toWalletId === null) {
    const message = 'fromWalletId or toWalletId is required (no sender mints, no receiver burns)';
    return {
      errors: [
        { field: 'fromWalletId', message },
        { field: 'toWalletId', message },
      ],
    };
  }
  if (fromWalletId !== null && toWalletId !== null && fromWalletId === toWalletId) {
    return { errors: [{ field: 'toWalletId', message: 'must differ from fromWalletId' }] };
  }
  if (fromWalletId === null) return { type: 'nftMint' };
  if (toWalletId === null) return { type: 'nftBurn' };
  return { type: 'nftTransfer' };
}

/** Chain tokens have the chain as their only writer, so a reorg can always be undone exactly. */
export const chainManagedMessage = (tokenId: string) =>
  `Token ${tokenId} is followed on chain: only the chain moves it (see docs/CHAIN.md "Following a chain").`;

export function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY_PATTERN.test(key);
}

/** Identifies a request by meaning: an omitted amount and "1" are the same request. */
export function requestFingerprint(request: MovementRequest): string {
  const canonical = JSON.stringify([
    request.tokenId.toLowerCase(),
    request.fromWalletId?.toLowerCase() ?? null,
    request.toWalletId?.toLowerCase() ?? null,
    request.amount,
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
