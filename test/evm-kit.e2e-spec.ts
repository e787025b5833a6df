import { decodeEventLog, parseAbiItem } from 'viem';
import { ERC1155_ABI, ERC20_ABI, ERC721_ABI, LocalChain, ZERO_ADDRESS, erc1155HexId } from './support/evm';

// The test kit itself: a real anvil from node_modules, the committed contract artifacts, and the
// logs a follower reads. If this fails, every chain suite fails for the same reason.
describe('EVM test kit', () => {
  let chain: LocalChain;

  beforeAll(async () => {
    chain = await LocalChain.start();
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it('starts anvil with chain id 31337 and unlocked accounts', async () => {
    expect(await chain.publicClient.getChainId()).toBe(31337);
    expect(chain.accounts.length).toBe(10);
  });

  it('deploys the ERC-721, mints and reads the Transfer log with 4 topics and the token URI', async () => {
    const nft = await chain.deployErc721({ baseUri: 'https://meta.example/nft/' });
    const [, alice, bob] = chain.accounts;
    const receipt = await chain.write(nft, ERC721_ABI, 'mint', [alice, 7n]);
    expect(receipt.logs).toHaveLength(1);
    const log = receipt.logs[0];
    expect(log.address).toBe(nft.toLowerCase());
    expect(log.topics).toHaveLength(4);
    const event = decodeEventLog({ abi: ERC721_ABI, data: log.data, topics: log.topics });
    expect(event).toEqual({ eventName: 'Transfer', args: { from: ZERO_ADDRESS, to: alice, tokenId: 7n } });
    expect(await chain.read(nft, ERC721_ABI, 'tokenURI', [7n])).toBe('https://meta.example/nft/7');

    await chain.write(nft, ERC721_ABI, 'setTokenURI', [7n, 'data:application/json,{}']);
    expect(await chain.read(nft, ERC721_ABI, 'tokenURI', [7n])).toBe('data:application/json,{}');

    // transferFrom by the owner, then many mints in one transaction.
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, bob, 7n], alice);
    expect(await chain.read(nft, ERC721_ABI, 'ownerOf', [7n])).toBe(bob);
    const many = await chain.write(nft, ERC721_ABI, 'mintMany', [[alice, bob, alice], 100n]);
    expect(many.logs).toHaveLength(3);
    const logs = await chain.publicClient.getLogs({
      address: nft,
      event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)'),
      fromBlock: 0n,
    });
    expect(logs.map((l) => l.args.tokenId)).toEqual([7n, 7n, 100n, 101n, 102n]);
  });

  it('deploys the ERC-1155 with an {id} template and reads TransferSingle and TransferBatch', async () => {
    const multi = await chain.deployErc1155('http://meta.example/{id}.json');
    const [, alice, bob] = chain.accounts;
    expect(await chain.read(multi, ERC1155_ABI, 'uri', [255n])).toBe('http://meta.example/{id}.json');
    expect(erc1155HexId(255n)).toBe('00000000000000000000000000000000000000000000000000000000000000ff');

    const single = await chain.write(multi, ERC1155_ABI, 'mint', [alice, 1n, 5n]);
    expect(decodeEventLog({ abi: ERC1155_ABI, data: single.logs[0].data, topics: single.logs[0].topics }).eventName).toBe('TransferSingle');
    const batch = await chain.write(multi, ERC1155_ABI, 'mintBatch', [alice, [2n, 3n], [10n, 20n]]);
    const decoded = decodeEventLog({ abi: ERC1155_ABI, data: batch.logs[0].data, topics: batch.logs[0].topics });
    expect(decoded).toMatchObject({
      eventName: 'TransferBatch',
      args: { from: ZERO_ADDRESS, to: alice, ids: [2n, 3n], values: [10n, 20n] },
    });
    await chain.write(multi, ERC1155_ABI, 'safeBatchTransferFrom', [alice, bob, [2n, 3n], [4n, 5n], '0x'], alice);
    expect(await chain.read(multi, ERC1155_ABI, 'balanceOf', [bob, 3n])).toBe(5n);
  });

  it('has an ERC-20 whose Transfer log has only 3 topics', async () => {
    const coin = await chain.deployErc20();
    const receipt = await chain.write(coin, ERC20_ABI, 'mint', [chain.accounts[1], 1000n]);
    expect(receipt.logs[0].topics).toHaveLength(3);
  });

  it('mines by hand, snapshots and reverts', async () => {
    const before = await chain.blockNumber();
    const snapshot = await chain.snapshot();
    await chain.mine(5);
    expect(await chain.blockNumber()).toBe(before + 5);
    const replaced = await chain.publicClient.getBlock({ blockNumber: BigInt(before + 1) });
    await chain.revert(snapshot);
    expect(await chain.blockNumber()).toBe(before);
    await chain.mine(1);
    const canonical = await chain.publicClient.getBlock({ blockNumber: BigInt(before + 1) });
    expect(canonical.hash).not.toBe(replaced.hash);
  });

  it('can be paused and resumed', async () => {
    chain.pause();
    await expect(chain.request('eth_blockNumber')).rejects.toThrow();
    chain.resume();
    expect(await chain.request('eth_blockNumber')).toMatch(/^0x/);
  });
});
