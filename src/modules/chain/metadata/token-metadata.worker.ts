import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, runsFollowers } from '../../../config/app-config';
import { DueMetadataToken, TokenMetadataSyncService } from '../../tokens/token-metadata-sync.service';
import { MetadataFetchError, metadataErrorText, nextMetadataAttempt } from './token-metadata-document.rules';
import { MetadataTarget, TokenMetadataFetcher } from './token-metadata-fetcher';

/** Tokens claimed per round. */
const CLAIM_LIMIT = 50;
/** Fetches in flight at once (one per distinct chain token; organizations sharing it share the fetch). */
const CONCURRENCY = 8;

/**
 * Fetches the metadata of chain tokens in the background, in processes with ROLE indexer or all
 * when CHAIN_RPC_URLS names a chain: claims due `pending` tokens, fetches each distinct chain
 * token once, and writes the result (or the failure with its next attempt) back through the
 * tokens module. Looks again every CHAIN_POLL_INTERVAL_MS, at once while there is more to do.
 */
@Injectable()
export class TokenMetadataWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TokenMetadataWorker');
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly sync: TokenMetadataSyncService,
    private readonly fetcher: TokenMetadataFetcher,
  ) {}

  onApplicationBootstrap(): void {
    if (!runsFollowers(this.config)) return;
    // No chain followed, no token URI to read: pending tokens wait until one is configured.
    if (this.config.chain.rpcUrls.length === 0) return;
    this.schedule(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.round()
        .then(
          (busy) => (busy ? 0 : this.config.chain.pollIntervalMs),
          (error: unknown) => {
            this.logger.warn({ err: error }, 'token metadata round failed');
            return this.config.chain.pollIntervalMs;
          },
        )
        .then((delay) => {
          this.running = null;
          this.schedule(delay);
        });
    }, delayMs);
    this.timer.unref();
  }

  /** One round; true when it claimed a full batch (more may be due). */
  async round(): Promise<boolean> {
    const due = await this.sync.claimDueMetadata(CLAIM_LIMIT, this.config.chain.metadataTimeoutMs * 4 + 10_000);
    if (due.length === 0) return false;
    const groups = new Map<string, DueMetadataToken[]>();
    for (const token of due) {
      const key = `${token.chainId}/${token.contractAddress}/${token.blockchainTokenId}/${token.standard}`;
      groups.set(key, [...(groups.get(key) ?? []), token]);
    }
    const queue = [...groups.values()];
    const workers = Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
      // On shutdown the rest stays claimed and is due again when its lease ends.
      for (let tokens = queue.shift(); tokens && !this.stopped; tokens = queue.shift()) await this.fetchAndStore(tokens);
    });
    await Promise.all(workers);
    return due.length === CLAIM_LIMIT;
  }

  private async fetchAndStore(tokens: DueMetadataToken[]): Promise<void> {
    const target: MetadataTarget = tokens[0];
    try {
      const { metadata } = await this.fetcher.fetch(target);
      for (const token of tokens) await this.sync.applyFetchedMetadata(token.id, metadata);
    } catch (error) {
      const failure =
        error instanceof MetadataFetchError ? error : new MetadataFetchError(String((error as Error)?.message ?? error), true);
      if (!(error instanceof MetadataFetchError)) this.logger.warn({ err: error }, 'token metadata fetch failed unexpectedly');
      const message = metadataErrorText(failure.message);
      const now = new Date();
      for (const token of tokens) {
        await this.sync.recordMetadataFailure(token.id, message, nextMetadataAttempt(token.attempts + 1, failure.retryable, now));
      }
    }
  }
}
