import { AbiDecodingZeroDataError, BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, PublicClient } from 'viem';
import type { ContractStandard } from './indexed-contract.repository';

const ERC165_ABI = [
  {
    type: 'function',
    name: 'supportsInterface',
    stateMutability: 'view',
    inputs: [{ name: 'interfaceId', type: 'bytes4' }],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const;

/** ERC-165 interface ids. */
const ERC721_INTERFACE = '0x80ac58cd';
const ERC1155_INTERFACE = '0xd9b67a26';

/** A call the contract itself refused or could not answer (no such function, no code): "no", not a node failure. */
function contractSaidNo(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk(
      (e) =>
        e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError || e instanceof AbiDecodingZeroDataError,
    ) !== null
  );
}

/**
 * The contract's standard by ERC-165 at the node's latest block: ERC-721, ERC-1155, or null
 * (neither, no ERC-165, or no code at the address). A node that does not answer rejects, so
 * that the question is asked again rather than answered null.
 */
export async function probeStandard(client: PublicClient, address: string): Promise<ContractStandard | null> {
  const code = await client.getCode({ address: address as `0x${string}` });
  if (!code || code === '0x') return null;
  const supports = async (interfaceId: `0x${string}`): Promise<boolean> => {
    try {
      return (
        (await client.readContract({
          address: address as `0x${string}`,
          abi: ERC165_ABI,
          functionName: 'supportsInterface',
          args: [interfaceId],
        })) === true
      );
    } catch (error) {
      if (contractSaidNo(error)) return false;
      throw error;
    }
  };
  if (await supports(ERC721_INTERFACE)) return 'erc721';
  if (await supports(ERC1155_INTERFACE)) return 'erc1155';
  return null;
}
