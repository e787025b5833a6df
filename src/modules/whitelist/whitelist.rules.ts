import { badRequest, FieldError } from '../../common/errors/domain-error';
import { normalizeAddress } from '../../common/evm-address';

const ADDRESS_RULE = 'must be a 0x-prefixed 20-byte hex address; mixed case must be a valid EIP-55 checksum';

/**
 * The lowercase, de-duplicated addresses of one add request, in the order first given. All bad
 * entries are named at once (`contractAddresses[3]`), so one round trip fixes a whole batch;
 * a request with any bad entry adds nothing.
 */
export function parseContractAddressList(inputs: readonly unknown[], field = 'contractAddresses'): string[] {
  const errors: FieldError[] = [];
  const unique = new Set<string>();
  inputs.forEach((input, index) => {
    const normalized = typeof input === 'string' ? normalizeAddress(input) : null;
    if (normalized === null) errors.push({ field: `${field}[${index}]`, message: ADDRESS_RULE });
    else unique.add(normalized);
  });
  if (errors.length > 0) {
    const detail =
      errors.length === 1
        ? `${errors[0].field} is not a valid EVM address (or its EIP-55 checksum is wrong); nothing was added.`
        : `${errors.length} entries of ${field} are not valid EVM addresses; nothing was added.`;
    throw badRequest('INVALID_ADDRESS', detail, errors);
  }
  return [...unique];
}
