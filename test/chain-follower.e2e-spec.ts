import { getAddress } from 'viem';
import { TestOrganization } from './support/factories';
import { ERC1155_ABI, ERC20_ABI, ERC721_ABI, LocalChain, ZERO_ADDRESS } from './support/evm';
import {
  balances,
  ChainTransaction,
  isTransactionEvent,
  SECRET,
  startFollowing,
  transactionsFromWebhooks,
  waitApplied,
  walletAt,
  watchingOrganization,
} from './support/chain-fixture';
import { TestReceiver } from './support/receiver';
import { signatureIsValid } from './support/webhooks';
import { TestApp } from './support/test-app';

// Every movement type read from a real node: the follower records what the chain did to the
// organization's watched addresses, exactly as an API write would (webhooks included).
describe('Following a chain: movements of watched addresses', () => {
  let chain: LocalChain;
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;
  let alice: `0x${string}`, bob: `0x${string}`, carol: `0x${string}`;
  let aliceWallet: string, bobWallet: string;

  beforeAll(async () => {
    // Each chain suite has a chain id of its own: the run's suites share one database, and so
    // the followers' cursors.
    chain = await LocalChain.start({ chainId: 31401 });
    [, alice, bob, carol] = chain.accounts;
    receiver = await new TestReceiver().start();
    t = await startFollowing(chain);
    org = await watchingOrganization(t, receiver);
    aliceWallet = await walletAt(t, org, alice, 'alice');
    // Mixed case (EIP-55) and lowercase addresses are the same watched address.
    bobWallet = await walletAt(t, org, bob.toLowerCase(), 'bob');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await chain?.stop();
  });

  /** The chain transactions of `org` recorded so far, once the follower has applied the head. */
  async function recorded(count: number): Promise<ChainTransaction[]> {
    await waitApplied(t, chain);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length >= count);
    return transactionsFromWebhooks(t, org, receiver);
  }

  it('records ERC-721 mint, transfer between two wallets, withdrawal, deposit and burn with their chain coordinates', async () => {
    const nft = await chain.deployErc721();
    const mint = await chain.write(nft, ERC721_ABI, 'mint', [alice, 7n]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, bob, 7n], alice);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [bob, carol, 7n], bob);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [carol, alice, 7n], carol);
    const burn = await chain.write(nft, ERC721_ABI, 'burn', [7n], alice);

    const transactions = await recorded(5);
    expect(transactions.map((x) => [x.type, x.fromWalletId, x.toWalletId, x.amount])).toEqual([
      ['nftMint', null, aliceWallet, '1'],
      ['nftTransfer', aliceWallet, bobWallet, '1'],
      ['nftWithdrawal', bobWallet, null, '1'],
      ['nftDeposit', null, aliceWallet, '1'],
      ['nftBurn', aliceWallet, null, '1'],
    ]);
    const tokenId = transactions[0].tokenId;
    expect(new Set(transactions.map((x) => x.tokenId))).toEqual(new Set([tokenId]));
    expect(transactions.every((x) => x.source === 'chain' && x.status === 'confirmed')).toBe(true);
    // The same signed webhooks as API writes, through the same outbox.
    const webhooks = receiver.received.filter(isTransactionEvent(org.id));
    expect(webhooks.every((w) => signatureIsValid(w, SECRET))).toBe(true);

    const block = await chain.publicClient.getBlock({ blockNumber: mint.blockNumber });
    expect(transactions[0].chain).toEqual({
      chainId: 31401,
      blockNumber: Number(mint.blockNumber),
      blockHash: mint.blockHash,
      blockTimestampUtc: new Date(Number(block.timestamp) * 1000).toISOString().replace('Z', '000+00:00'),
      transactionHash: mint.transactionHash,
      logIndex: 0,
      batchIndex: null,
      from: ZERO_ADDRESS,
      to: alice,
    });
    // A chain transaction happened at its block's time.
    expect(transactions[0].createdAtUtc).toBe(transactions[0].chain!.blockTimestampUtc);
    expect(transactions[2].chain).toMatchObject({ from: bob, to: carol });
    expect(transactions[4].chain).toMatchObject({ transactionHash: burn.transactionHash, from: alice, to: ZERO_ADDRESS });
    // Everything left again: nothing held.
    expect(await balances(t, org, aliceWallet)).toEqual({});
    expect(await balances(t, org, bobWallet)).toEqual({});
  });

  it('records ERC-1155 single and batch movements with their amounts, one transaction per id/value pair', async () => {
    receiver.received.length = 0;
    const multi = await chain.deployErc1155('data:application/json,{"name":"x"}');
    await chain.write(multi, ERC1155_ABI, 'mintBatch', [alice, [1n, 2n, 3n], [5n, 10n, 1n]]);
    const batch = await chain.write(multi, ERC1155_ABI, 'safeBatchTransferFrom', [alice, bob, [1n, 2n], [2n, 3n], '0x'], alice);
    await chain.write(multi, ERC1155_ABI, 'safeTransferFrom', [bob, carol, 2n, 1n, '0x'], bob);
    await chain.write(multi, ERC1155_ABI, 'safeTransferFrom', [carol, alice, 2n, 1n, '0x'], carol);
    await chain.write(multi, ERC1155_ABI, 'burn', [alice, 3n, 1n], alice);

    const transactions = await recorded(8);
    expect(transactions.map((x) => [x.type, x.fromWalletId, x.toWalletId, x.amount, x.chain!.batchIndex])).toEqual([
      ['nftMint', null, aliceWallet, '5', 0],
      ['nftMint', null, aliceWallet, '10', 1],
      ['nftMint', null, aliceWallet, '1', 2],
      ['nftTransfer', aliceWallet, bobWallet, '2', 0],
      ['nftTransfer', aliceWallet, bobWallet, '3', 1],
      ['nftWithdrawal', bobWallet, null, '1', null],
      ['nftDeposit', null, aliceWallet, '1', null],
      ['nftBurn', aliceWallet, null, '1', null],
    ]);
    // The pairs of one TransferBatch share its log.
    const batchRows = transactions.slice(3, 5);
    expect(batchRows.map((x) => x.chain!.transactionHash)).toEqual([batch.transactionHash, batch.transactionHash]);
    expect(batchRows[0].chain!.logIndex).toBe(batchRows[1].chain!.logIndex);

    const [id1, id2] = [transactions[0].tokenId, transactions[1].tokenId];
    expect(await balances(t, org, aliceWallet)).toEqual({ [id1]: '3', [id2]: '8' });
    expect(await balances(t, org, bobWallet)).toEqual({ [id1]: '2', [id2]: '2' });
  });

  it('ignores ERC-20 transfers (same Transfer topic, three topics) and movements of addresses nobody watches', async () => {
    receiver.received.length = 0;
    const coin = await chain.deployErc20();
    await chain.write(coin, ERC20_ABI, 'mint', [alice, 1000n]);
    await chain.write(coin, ERC20_ABI, 'transfer', [bob, 10n], alice);
    const nft = await chain.deployErc721();
    await chain.write(nft, ERC721_ABI, 'mint', [carol, 1n]);
    // A marker the follower must record, applied after everything above.
    await chain.write(nft, ERC721_ABI, 'mint', [bob, 2n]);

    const transactions = await recorded(1);
    expect(transactions.map((x) => [x.type, x.toWalletId, x.chain!.to])).toEqual([['nftMint', bobWallet, getAddress(bob)]]);
  });

  it('shows the same movements to every organization watching the address, in its own data', async () => {
    receiver.received.length = 0;
    const other = await watchingOrganization(t, receiver, 'other');
    const otherAlice = await walletAt(t, other, alice, 'alice elsewhere');
    const nft = await chain.deployErc721();
    await chain.write(nft, ERC721_ABI, 'mint', [alice, 9n]);
    await chain.write(nft, ERC721_ABI, 'transferFrom', [alice, bob, 9n], alice);

    await waitApplied(t, chain);
    await receiver.waitFor((r) => r.filter(isTransactionEvent(org.id)).length >= 2 && r.filter(isTransactionEvent(other.id)).length >= 2);
    const mine = await transactionsFromWebhooks(t, org, receiver);
    const theirs = await transactionsFromWebhooks(t, other, receiver);
    expect(mine.map((x) => x.type)).toEqual(['nftMint', 'nftTransfer']);
    // Bob is not the other organization's: for it the token left to an outside address.
    expect(theirs.map((x) => [x.type, x.fromWalletId, x.toWalletId])).toEqual([
      ['nftMint', null, otherAlice],
      ['nftWithdrawal', otherAlice, null],
    ]);
    expect(theirs[0].tokenId).not.toBe(mine[0].tokenId);
  });
});
