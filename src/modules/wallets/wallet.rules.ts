import { zeroAddress } from 'viem';
import { badRequest } from '../../common/errors/domain-error';
import { parseAddress } from '../../common/evm-address';

/**
 * A wallet's address as stored (lowercase), from any accepted form. The zero address is refused:
 * it is the sender of every mint and the receiver of every burn on every contract, not anyone's
 * wallet, and a wallet there would take in every token movement of a chain.
 */
export function parseWalletAddress(input: string): string {
  const address = parseAddress(input, 'address');
  if (address === zeroAddress) {
    throw badRequest('INVALID_ADDRESS', 'address is the zero address, which is no one’s wallet.', [
      { field: 'address', message: 'must not be the zero address (0x0000000000000000000000000000000000000000)' },
    ]);
  }
  return address;
}
