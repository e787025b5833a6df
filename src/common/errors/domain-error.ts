import type { ErrorCode, ErrorCodeFor, StatusOf } from './error-catalogue';

export interface FieldError {
  /** Position of the offending item in a batch request; absent for single requests. */
  index?: number;
  field: string;
  message: string;
}

/**
 * An error the client can act on. Thrown from services, mapped to problem details by the one
 * global filter; `code` is the stable machine-readable part of the contract, a key of the error
 * catalogue (error-catalogue.ts) whose status `status` must be.
 */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly status: StatusOf<C>,
    readonly code: C,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

/** `instanceof` narrows a generic class to `DomainError<any>`; this keeps the code typed. */
export const isDomainError = (error: unknown): error is DomainError => error instanceof DomainError;

export const badRequest = (code: ErrorCodeFor<400>, detail: string, errors?: FieldError[]): DomainError =>
  new DomainError(400, code, detail, errors);
export const notFound = (code: ErrorCodeFor<404>, detail: string): DomainError => new DomainError(404, code, detail);
export const conflict = (code: ErrorCodeFor<409>, detail: string): DomainError => new DomainError(409, code, detail);
export const unprocessable = (code: ErrorCodeFor<422>, detail: string): DomainError => new DomainError(422, code, detail);

export function validationFailed(errors: FieldError[]): DomainError {
  const first = errors[0];
  const detail = first ? `${first.field}: ${first.message}` : 'The request is not valid.';
  return new DomainError(400, 'VALIDATION_FAILED', detail, errors);
}
