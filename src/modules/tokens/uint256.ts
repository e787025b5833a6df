import { ValidateBy, ValidationOptions } from 'class-validator';

export const UINT256_MAX = (1n << 256n) - 1n;

/** Canonical decimal: no sign, no leading zeros, no exponent; 78 digits is the most a uint256 needs. */
export const UINT256_DECIMAL_PATTERN = '^(0|[1-9][0-9]{0,77})$';
const CANONICAL_DECIMAL = new RegExp(UINT256_DECIMAL_PATTERN);

/** The value of a canonical uint256 decimal string, or null when the string is not one. */
export function parseUint256(input: unknown): bigint | null {
  if (typeof input !== 'string' || !CANONICAL_DECIMAL.test(input)) return null;
  const value = BigInt(input);
  return value <= UINT256_MAX ? value : null;
}

export function isUint256(input: unknown): input is string {
  return parseUint256(input) !== null;
}

export function isPositiveUint256(input: unknown): input is string {
  const value = parseUint256(input);
  return value !== null && value > 0n;
}

/** Numeric comparison of two uint256 strings (string comparison would put "9" after "10"). */
export function compareUint256(a: string, b: string): -1 | 0 | 1 {
  const x = parseUint256(a);
  const y = parseUint256(b);
  if (x === null || y === null) throw new RangeError('not a uint256 decimal string');
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A request field holding a uint256 as a decimal string; `positive` also refuses "0". */
export function IsUint256String(options: { positive?: boolean } = {}, validationOptions?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isUint256String',
      validator: {
        validate: (value) => (options.positive ? isPositiveUint256(value) : isUint256(value)),
        defaultMessage: () =>
          options.positive
            ? 'must be a decimal string of an integer from 1 to 2^256-1, without leading zeros'
            : 'must be a decimal string of an integer from 0 to 2^256-1, without leading zeros',
      },
    },
    validationOptions,
  );
}
