import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Periodic } from '../../../common/scheduling/periodic';
import { AppConfig, runsFollowers } from '../../../config/app-config';
import { DueMetadataToken, MetadataContract, TokenMetadataSyncService } from '../../tokens/token-metadata-sync.service';
import { breakerBudget, breakerGate, breakerMessage } from './metadata-breaker.rules';
import { contractKey, MetadataBreakerRepository } from './metadata-breaker.repository';
import { MetadataFetchError, metadataErrorText, nextMetadataAttempt } from './token-metadata-document.rules';
import { MetadataTarget, TokenMetadataFetcher } from './token-metadata-fetcher';

/** Fetches in flight at once (one per distinct chain token; organizations sharing it share the fetch). */
const CONCURRENCY = 8;
/**
 * At most this many of them for one organization, and for one contract: whatever one
 * organization has queued, or one contract's server does (never answer), the other slots keep
 * serving everyone else.
 */
const PER_ORGANIZATION = 6;
const PER_CONTRACT = 4;

/** Failing contracts this worker knows of (the breaker's count as last seen); bounded, as a cache. */
const MAX_FAILING_CONTRACTS = 10_000;

/** One fetch in flight: the chain token's tokens (any organization), and what it holds of the shares. */
interface Fetching {
  tokens: DueMetadataToken[];
  organizations: string[];
  contract: MetadataContract;
}

const chainTokenKey = (token: DueMetadataToken) => `${token.chainId}/${token.contractAddress}/${token.blockchainTokenId}/${token.standard}`;

/**
 * Fetches the metadata of chain tokens in the background, in processes with ROLE indexer or all
 * when CHAIN_RPC_URLS names a chain. It keeps up to CONCURRENCY fetches running: whenever a slot
 * is free it claims the next due tokens through the tokens module, which hands them out fairly
 * (organizations, then contracts, in turn, within the shares above), fetches each distinct chain
 * token once, and writes the result (or the failure with its next attempt) back. A contract whose
 * documents keep timing out is paused by its circuit breaker (metadata-breaker.rules.ts): its
 * tokens are put off, not fetched. Looks again every CHAIN_POLL_INTERVAL_MS, and at once when a
 * fetch ends.
 */
@Injectable()
export class TokenMetadataWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TokenMetadataWorker');
  private readonly loop: Periodic;
  private readonly fetching = new Map<string, Fetching>();
  private readonly running = new Set<Promise<void>>();
  /** Timeouts or connection failures in a row per contract, as the breaker last told: it narrows the contract's share. */
  private readonly failing = new Map<string, { contract: MetadataContract; failures: number }>();
  private readonly leaseMs: number;

  constructor(
    private readonly config: AppConfig,
    private readonly sync: TokenMetadataSyncService,
    private readonly fetcher: TokenMetadataFetcher,
    private readonly breakers: MetadataBreakerRepository,
  ) {
    // Covers the token URI call and the document fetch of a claim; then the token is due again.
    this.leaseMs = config.chain.metadataTimeoutMs * 4 + 10_000;
    this.loop = new Periodic({
      runAtStart: true,
      // More may be due while a slot is free: at once. Otherwise when a fetch ends (wake), or at the next poll.
      run: async () => ((await this.fill()) && this.fetching.size < CONCURRENCY ? 'busy' : 'idle'),
      intervalMs: config.chain.pollIntervalMs,
      logger: this.logger,
      failure: 'claiming token metadata failed',
    });
  }

  onApplicationBootstrap(): void {
    if (!runsFollowers(this.config)) return;
    // No chain followed, no token URI to read: pending tokens wait until one is configured.
    if (this.config.chain.rpcUrls.length === 0) return;
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
    // What is being fetched is written back; tokens claimed but not fetched are due again after their lease.
    await Promise.allSettled([...this.running]);
  }

  /** Claims tokens for the free slots and starts their fetches; true when it got as many as it asked for. */
  private async fill(): Promise<boolean> {
    const free = CONCURRENCY - this.fetching.size;
    if (free <= 0) return false;
    const busyOrganizations = new Map<string, number>();
    const busyContracts = new Map<string, [MetadataContract, number]>();
    for (const fetch of this.fetching.values()) {
      for (const id of fetch.organizations) busyOrganizations.set(id, (busyOrganizations.get(id) ?? 0) + 1);
      const key = contractKey(fetch.contract);
      busyContracts.set(key, [fetch.contract, (busyContracts.get(key)?.[1] ?? 0) + 1]);
    }
    // A failing contract's share shrinks to the failures its breaker still allows: counted as busy.
    for (const [key, { contract, failures }] of this.failing) {
      const held = Math.max(0, PER_CONTRACT - breakerBudget(failures));
      if (held > 0) busyContracts.set(key, [contract, (busyContracts.get(key)?.[1] ?? 0) + held]);
    }
    const due = await this.sync.claimDueMetadata(free, this.leaseMs, {
      busyOrganizations,
      busyContracts: busyContracts.values(),
      perOrganization: PER_ORGANIZATION,
      perContract: PER_CONTRACT,
    });
    if (due.length === 0) return false;

    const groups = new Map<string, DueMetadataToken[]>();
    for (const token of due) {
      const key = chainTokenKey(token);
      const inFlight = this.fetching.get(key);
      // Claimed again while being fetched (a refresh): the running fetch answers for it too.
      if (inFlight) inFlight.tokens.push(token);
      else groups.set(key, [...(groups.get(key) ?? []), token]);
    }
    if (groups.size === 0) return due.length === free;
    const contracts = new Map(
      [...groups.values()].map(([t]) => [contractKey(t), { chainId: t.chainId, contractAddress: t.contractAddress }]),
    );
    const { states, now } = await this.breakers.find([...contracts.values()]);
    for (const [key, tokens] of groups) {
      const contract = contracts.get(contractKey(tokens[0]))!;
      const state = states.get(contractKey(contract)) ?? null;
      this.noteFailures(contract, state?.failures ?? 0);
      const gate = breakerGate(state, now);
      if (gate.kind === 'open') {
        await this.sync.deferMetadata(
          tokens.map((t) => t.id),
          gate.until,
          breakerMessage(gate.until),
        );
        continue;
      }
      if (gate.kind === 'trial' && !(await this.breakers.takeTrial(contract, this.leaseMs))) {
        // Another fetch is the trial: wait for its outcome (at most its lease).
        const until = new Date(now.getTime() + this.leaseMs);
        await this.sync.deferMetadata(
          tokens.map((t) => t.id),
          until,
          breakerMessage(until),
        );
        continue;
      }
      this.start(key, { tokens, organizations: [...new Set(tokens.map((t) => t.organizationId))], contract });
    }
    return due.length === free;
  }

  private noteFailures(contract: MetadataContract, failures: number): void {
    const key = contractKey(contract);
    if (failures === 0) {
      this.failing.delete(key);
      return;
    }
    if (!this.failing.has(key) && this.failing.size >= MAX_FAILING_CONTRACTS) this.failing.clear();
    this.failing.set(key, { contract, failures });
  }

  private start(key: string, fetch: Fetching): void {
    this.fetching.set(key, fetch);
    const task = this.fetchAndStore(fetch)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'storing token metadata failed'))
      .finally(() => {
        if (this.fetching.get(key) === fetch) this.fetching.delete(key);
        this.running.delete(task);
        this.loop.wake();
      });
    this.running.add(task);
  }

  private async fetchAndStore(fetch: Fetching): Promise<void> {
    const target: MetadataTarget = fetch.tokens[0];
    try {
      const document = await this.fetcher.fetch(target);
      if (document.overNetwork) await this.answered(fetch.contract);
      // Tokens claimed while the fetch ran joined `fetch.tokens` (this loop takes those that join during it too).
      for (const token of fetch.tokens) await this.sync.applyFetchedMetadata(token.id, document.metadata);
    } catch (error) {
      const failure =
        error instanceof MetadataFetchError ? error : new MetadataFetchError(String((error as Error)?.message ?? error), true);
      if (!(error instanceof MetadataFetchError)) this.logger.warn({ err: error }, 'token metadata fetch failed unexpectedly');
      let message = metadataErrorText(failure.message);
      let notBefore: Date | null = null;
      if (failure.reach === 'answered') await this.answered(fetch.contract);
      if (failure.reach === 'unreachable') {
        const breaker = await this.breakers.recordUnreachable(fetch.contract);
        this.noteFailures(fetch.contract, breaker.failures);
        if (breaker.openUntil) {
          if (breaker.opened) {
            const paused = await this.sync.pauseContractMetadata(
              fetch.contract.chainId,
              fetch.contract.contractAddress,
              breaker.openUntil,
              breakerMessage(breaker.openUntil),
            );
            this.logger.warn(
              { chainId: fetch.contract.chainId, contractAddress: fetch.contract.contractAddress, until: breaker.openUntil, paused },
              'token metadata circuit breaker opened: the contract’s documents keep timing out or refusing connections',
            );
          }
          message = metadataErrorText(`${failure.message}; ${breakerMessage(breaker.openUntil)}`);
          notBefore = breaker.openUntil;
        }
      }
      const now = new Date();
      for (const token of fetch.tokens) {
        let next = nextMetadataAttempt(token.attempts + 1, failure.retryable, now);
        if (next && notBefore && next < notBefore) next = notBefore;
        await this.sync.recordMetadataFailure(token.id, message, next);
      }
    }
  }

  private async answered(contract: MetadataContract): Promise<void> {
    await this.breakers.recordAnswered(contract);
    this.noteFailures(contract, 0);
  }
}
