import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { SPAM_FILTERS } from '../../spam/spam-filter';

/** Contract filters a query may repeat at most. */
export const MAX_CONTRACT_FILTERS = 100;

/**
 * The query parameters the wallet reads share (balances, activity, collections), each declared
 * once with its validation and documentation; a read names what it filters in `description`.
 */
export function ContractAddressQuery(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: [String], description, example: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'] }),
    IsOptional(),
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value)),
    IsArray(),
    ArrayMaxSize(MAX_CONTRACT_FILTERS),
    IsString({ each: true }),
    Matches(/^0x[0-9a-fA-F]{40}$/, { each: true, message: 'each value must be a 0x-prefixed 20-byte hex address' }),
  );
}

/** `asOf`: an instant in ISO 8601 with an offset (parsed and refused by the service's rule). */
export function AsOfQuery(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: String, format: 'date-time', description, example: '2026-11-25T10:00:00+00:00' }),
    IsOptional(),
    IsString(),
    MaxLength(64),
  );
}

/** `spam=include|exclude|only`. */
export function SpamFilterQuery(description: string): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional({ enum: SPAM_FILTERS, default: 'include', description }), IsOptional(), IsIn(SPAM_FILTERS));
}
