import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { parseAbi, type PublicClient } from 'viem';
import { Periodic, RunOutcome } from '../../common/scheduling/periodic';
import { AppConfig, runsFollowers } from '../../config/app-config';
import { ChainClients, shortReason } from '../chain/chain-clients';
import { decodeTransferLogs, RpcLog } from '../chain/log-decoding';
import { DueJudgement, SpamRepository } from './spam.repository';
import { SpamService } from './spam.service';
import { massAirdropContracts } from './spam.rules';

/** Judgements claimed per run. */
const BATCH = 16;
/** A claimed judgement is due again after this if its worker died. */
const LEASE_MS = 60_000;
/** Short: a new contract's name and symbol, and a verdict, should show within a second of its first movement. */
const POLL_INTERVAL_MS = 250;
/** A receipt the node cannot give (a replaced block, a node outage) is asked again this many times, then dropped. */
const MAX_ATTEMPTS = 8;
/** name() and symbol() are shown as read, up to this length. */
const MAX_LABEL = 200;

const METADATA_ABI = parseAbi(['function name() view returns (string)', 'function symbol() view returns (string)']);

interface RawReceipt {
  from: string;
  logs: RpcLog[];
}

/**
 * Judges in the background (ROLE indexer or all) what SpamInbox queued: each chain transaction's
 * whole receipt (massAirdrop, and the name and symbol of every NFT contract in it, read once), and
 * the contracts whose token metadata fired lureMetadata. Any number of workers share the queue.
 */
@Injectable()
export class SpamWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SpamWorker');
  private readonly loop: Periodic;

  constructor(
    private readonly config: AppConfig,
    private readonly em: EntityManager,
    private readonly repository: SpamRepository,
    private readonly spam: SpamService,
    private readonly chains: ChainClients,
  ) {
    this.loop = new Periodic({
      intervalMs: POLL_INTERVAL_MS,
      run: () => this.run(),
      runAtStart: true,
      backoff: { baseMs: POLL_INTERVAL_MS, maxMs: 30_000 },
      logger: this.logger,
      failure: 'judging spam failed',
      logEvery: 20,
    });
  }

  onApplicationBootstrap(): void {
    if (runsFollowers(this.config)) this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  private async run(): Promise<RunOutcome> {
    const due = await this.repository.claimDue(BATCH, LEASE_MS);
    for (const item of due) await this.judge(item);
    return due.length === BATCH ? 'busy' : 'idle';
  }

  private async judge(item: DueJudgement): Promise<void> {
    try {
      if (item.kind === 'transaction') await this.judgeTransaction(item);
      else await this.record(item, item.subject, { [item.kind]: true });
    } catch (error) {
      if (item.attempts >= MAX_ATTEMPTS) {
        this.logger.warn(
          { chainId: item.chainId, subject: item.subject },
          `spam judgement dropped after ${item.attempts} attempts: ${shortReason(error)}`,
        );
        await this.em.fork().transactional((em) => this.repository.complete(em, item.id));
        return;
      }
      await this.repository.retryAt(item.id, new Date(Date.now() + Math.min(60_000, 500 * 2 ** item.attempts)));
    }
  }

  private async judgeTransaction(item: DueJudgement): Promise<void> {
    if (!this.chains.has(item.chainId)) {
      // The chain is no longer configured: nothing can be read of it.
      await this.em.fork().transactional((em) => this.repository.complete(em, item.id));
      return;
    }
    const client = this.chains.get(item.chainId);
    // The raw answer: its logs in the shape the follower decodes (viem's receipt parses them into another).
    const request = client.request.bind(client) as unknown as (args: { method: string; params: unknown[] }) => Promise<RawReceipt | null>;
    const receipt = await request({ method: 'eth_getTransactionReceipt', params: [item.subject] });
    if (receipt === null) throw new Error(`no receipt for ${item.subject}`);
    const movements = decodeTransferLogs(item.chainId, receipt.logs);
    const contracts = [...new Set(movements.map((m) => m.contractAddress))];
    await this.readProfiles(client, item.chainId, contracts);
    const airdrops = new Set(massAirdropContracts(movements, receipt.from));
    await this.em.fork().transactional(async (em) => {
      for (const contract of contracts) await this.spam.recordRuleHits(em, item.chainId, contract, { massAirdrop: airdrops.has(contract) });
      await this.repository.complete(em, item.id);
    });
  }

  private async record(item: DueJudgement, contract: string, found: Parameters<SpamService['recordRuleHits']>[3]): Promise<void> {
    await this.em.fork().transactional(async (em) => {
      await this.spam.recordRuleHits(em, item.chainId, contract, found);
      await this.repository.complete(em, item.id);
    });
  }

  /** name() and symbol() of the contracts not read yet: null when the call reverts or fails. */
  private async readProfiles(client: PublicClient, chainId: number, contracts: string[]): Promise<void> {
    const known = await this.repository.knownProfiles(chainId, contracts);
    for (const contract of contracts.filter((c) => !known.has(c))) {
      const read = async (functionName: 'name' | 'symbol') => {
        try {
          const value = await client.readContract({ address: contract as `0x${string}`, abi: METADATA_ABI, functionName });
          return label(value);
        } catch {
          return null;
        }
      };
      const [name, symbol] = await Promise.all([read('name'), read('symbol')]);
      await this.repository.recordProfile(chainId, contract, name, symbol);
    }
  }
}

/** A contract's own label as shown: without NUL characters (PostgreSQL text refuses them), bounded. */
function label(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return value.split(String.fromCharCode(0)).join('').slice(0, MAX_LABEL);
}
