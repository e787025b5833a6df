import type { ValidationError } from 'class-validator';
import { FieldError, validationFailed } from './domain-error';

/** Flattens nested class-validator errors into `{field: "metadata.name", message}` entries. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      // class-validator phrases whitelist failures as "property x should not exist".
      out.push({ field, message: message.startsWith('property ') ? 'is not an accepted field' : message });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

export const validationExceptionFactory = (errors: ValidationError[]) => validationFailed(flattenValidationErrors(errors));
