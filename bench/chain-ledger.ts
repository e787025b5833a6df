import { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { buildOrmOptions } from '../src/database/mikro-orm.options';
import { MediaRepository } from '../src/modules/media/media.repository';
import { MediaService } from '../src/modules/media/media.service';
import { ENTITIES } from '../src/orm-model';
import { DomainEventPublisher } from '../src/modules/domain-events/domain-event.publisher';
import { Token } from '../src/modules/tokens/token.entity';
import { TokensService } from '../src/modules/tokens/tokens.service';
import { ChainMovement, ChainMovementsService } from '../src/modules/transactions/chain-movements.service';
import { Balance } from '../src/modules/transactions/balance.entity';
import { Wallet } from '../src/modules/wallets/wallet.entity';
import { WalletsService } from '../src/modules/wallets/wallets.service';
import { SpamInbox } from '../src/modules/spam/spam-inbox';
import { SpamRepository } from '../src/modules/spam/spam.repository';

const WALLETS = 1000;
const MOVEMENTS = 10_000;
const BLOCKS = 1000;
const CHAIN = 31337;
const ZERO = '0x0000000000000000000000000000000000000000';

/**
 * The `chainLedger` scenario: the ledger's share of following a chain, without a node. 10,000
 * ERC-721 mints over 1,000 blocks to 1,000 watched wallets are recorded in one call (one
 * follower range), then 10,000 transfers between those wallets, then everything is reverted as a
 * reorg would (revertFrom the first block). Each step is one database transaction; the figures
 * are its wall time, which bounds what a follower can apply per range.
 */
export async function chainLedgerScenario(ctx: {
  databaseUrl: string;
  db: Client;
  organizationId: string;
  log: (message: string) => void;
}): Promise<Record<string, unknown>> {
  const addresses = Array.from({ length: WALLETS }, (_, i) => `0x${(i + 1).toString(16).padStart(40, 'd')}`);
  await ctx.db.query(
    `insert into "wallet" ("id", "created_at", "organization_id", "name", "address")
     select gen_random_uuid(), now(), $1, 'chain bench', a from unnest($2::text[]) a`,
    [ctx.organizationId, addresses],
  );
  const orm = await MikroORM.init(
    buildOrmOptions(loadConfig({ NODE_ENV: 'development', DATABASE_URL: ctx.databaseUrl }), { entities: ENTITIES }),
  );
  try {
    const em = orm.em.fork();
    const events = new DomainEventPublisher();
    const service = new ChainMovementsService(
      new TokensService(em, em.getRepository(Token), events, new MediaService(new MediaRepository(em))),
      new WalletsService(em, em.getRepository(Wallet), events),
      events,
      em.getRepository(Balance),
      new SpamInbox(new SpamRepository(em)),
    );
    const contract = `0x${'ab'.repeat(20)}`;
    const at = (block: number) => new Date(Date.UTC(2026, 10, 1) + block * 2000);
    const movement = (i: number, firstBlock: number, from: (i: number) => string, to: (i: number) => string): ChainMovement => {
      const block = firstBlock + Math.floor((i * BLOCKS) / MOVEMENTS);
      return {
        chainId: CHAIN,
        blockNumber: block,
        blockHash: `0x${block.toString(16).padStart(64, 'e')}`,
        blockTimestamp: at(block),
        transactionHash: `0x${(firstBlock * MOVEMENTS + i).toString(16).padStart(64, 'f')}`,
        logIndex: 0,
        batchIndex: null,
        contractAddress: contract,
        blockchainTokenId: String(i + 1),
        amount: '1',
        from: from(i),
        to: to(i),
        standard: 'erc721',
      };
    };
    const mints = Array.from({ length: MOVEMENTS }, (_, i) =>
      movement(
        i,
        1,
        () => ZERO,
        (n) => addresses[n % WALLETS],
      ),
    );
    const transfers = Array.from({ length: MOVEMENTS }, (_, i) =>
      movement(
        i,
        1 + BLOCKS,
        (n) => addresses[n % WALLETS],
        (n) => addresses[(n + 1) % WALLETS],
      ),
    );
    const timed = async <T>(name: string, step: (tx: typeof em) => Promise<T>): Promise<{ ms: number; result: T }> => {
      const started = performance.now();
      const result = await em.fork().transactional((tx) => step(tx));
      const ms = Math.round(performance.now() - started);
      ctx.log(
        `chainLedger ${name}: ${ms} ms ${JSON.stringify(typeof result === 'object' ? { recorded: (result as { recorded: number }).recorded } : result)}`,
      );
      return { ms, result };
    };
    const mint = await timed('record 10,000 mints', (tx) => service.record(tx, mints));
    const again = await timed('the same 10,000 again (all skipped)', (tx) => service.record(tx, mints));
    const transfer = await timed('record 10,000 transfers', (tx) => service.record(tx, transfers));
    const revert = await timed('revert all 20,000', (tx) => service.revertFrom(tx, CHAIN, 1));
    if (
      mint.result.recorded !== MOVEMENTS ||
      again.result.recorded !== 0 ||
      transfer.result.recorded !== MOVEMENTS ||
      revert.result !== 2 * MOVEMENTS
    ) {
      throw new Error('chainLedger: unexpected counts');
    }
    return {
      wallets: WALLETS,
      movements: MOVEMENTS,
      blocks: BLOCKS,
      recordMintsMs: mint.ms,
      recordRepeatMs: again.ms,
      recordTransfersMs: transfer.ms,
      revert20kMs: revert.ms,
    };
  } finally {
    await orm.close(true);
  }
}
