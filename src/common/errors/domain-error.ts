export interface FieldError {
  /** Position of the offending item in a batch request; absent for single requests. */
  index?: number;
  field: string;
  message: string;
}

/**
 * An error the client can act on. Thrown from services, mapped to problem details by the one
 * global filter; `code` is the stable machine-readable part of the contract.
 */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export const badRequest = (code: string, detail: string, errors?: FieldError[]) => new DomainError(400, code, detail, errors);
export const notFound = (code: string, detail: string) => new DomainError(404, code, detail);
export const conflict = (code: string, detail: string) => new DomainError(409, code, detail);
export const unprocessable = (code: string, detail: string) => new DomainError(422, code, detail);

export function validationFailed(errors: FieldError[]): DomainError {
  const first = errors[0];
  const detail = first ? `${first.field}: ${first.message}` : 'The request is not valid.';
  return new DomainError(400, 'VALIDATION_FAILED', detail, errors);
}
