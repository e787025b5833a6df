import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Periodic, RunOutcome } from '../../common/scheduling/periodic';
import { AppConfig, runsFollowers } from '../../config/app-config';
import { DomainEventPublisher } from '../domain-events/domain-event.publisher';
import { MediaFetcher } from './media-fetcher';
import { MediaStorage } from './media-storage';
import { makeThumbnails } from './media-thumbnailer';
import { DueMedia, KnownImage, MediaRepository } from './media.repository';
import { MediaFailure, MediaState, nextMediaAttempt, sameMediaOutcome } from './media.rules';
import { tokenUpdated } from '../domain-events/domain-event.catalogue';

/** Images fetched at once by one process. */
const CONCURRENCY = 8;
/** Of those, at most this many of one organization: the rest stays for everyone else. */
const PER_ORGANIZATION = 4;
/** Images decoded at once: the CPU work, and the memory of a decoded image, are bounded by this. */
const PROCESSING_CONCURRENCY = 2;
/** A claimed image is due again after this if its worker died (the fetch has 15 s, processing 30 s). */
const LEASE_MS = 120_000;
/** How often the queue is looked at when idle. */
const POLL_INTERVAL_MS = 500;

const ok = (image: KnownImage): MediaState => ({
  status: 'ok',
  error: null,
  width: image.width,
  height: image.height,
  contentType: image.contentType,
  sha256: image.sha256,
});

/**
 * Fetches token images in the background (docs/IMAGES.md "Images"), in processes with ROLE indexer or
 * all: claims due images fairly across organizations, fetches each, makes and stores its
 * thumbnails once per original (by SHA-256), and records the outcome on every token waiting for
 * it, with the `nft` `update` webhook when the outcome differs from the one before.
 */
@Injectable()
export class MediaWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('MediaWorker');
  private readonly busy = new Map<string, number>();
  private active = 0;
  private stopped = false;
  private readonly loop: Periodic;
  private readonly tasks = new Set<Promise<void>>();
  /** One fetch per image URL at a time in this process: tokens sharing a URL share its outcome. */
  private readonly inFlight = new Map<string, Promise<MediaState>>();
  private processing = 0;
  private readonly processingWaiters: (() => void)[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly em: EntityManager,
    private readonly repository: MediaRepository,
    private readonly fetcher: MediaFetcher,
    private readonly storage: MediaStorage,
    private readonly events: DomainEventPublisher,
  ) {
    this.loop = new Periodic({
      intervalMs: POLL_INTERVAL_MS,
      run: () => this.fill(),
      runAtStart: true,
      backoff: { baseMs: POLL_INTERVAL_MS, maxMs: 30_000 },
      logger: this.logger,
      failure: 'claiming token images failed',
      logEvery: 20,
    });
  }

  onApplicationBootstrap(): void {
    if (runsFollowers(this.config)) this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.loop.stop();
    // What is claimed but not finished is due again when its lease ends: nothing is recorded of
    // the fetches cut here.
    await this.fetcher.abortAll();
    await Promise.allSettled([...this.tasks]);
  }

  /**
   * Claims as many due images as there are free slots, within each organization's share. Every
   * image that finishes frees a slot and wakes the loop, so a full worker claims again at once.
   */
  private async fill(): Promise<RunOutcome> {
    if (this.stopped || this.active >= CONCURRENCY) return 'idle';
    const limit = CONCURRENCY - this.active;
    const due = await this.repository.claimDue({ limit, busy: this.busy, perOrganization: PER_ORGANIZATION, leaseMs: LEASE_MS });
    for (const item of due) this.start(item);
    return 'idle';
  }

  private start(item: DueMedia): void {
    this.active++;
    this.busy.set(item.organizationId, (this.busy.get(item.organizationId) ?? 0) + 1);
    const task = this.handle(item)
      .catch((error: unknown) => this.logger.warn({ err: error, tokenId: item.tokenId }, 'token image failed unexpectedly'))
      .finally(() => {
        this.active--;
        const left = (this.busy.get(item.organizationId) ?? 1) - 1;
        if (left === 0) this.busy.delete(item.organizationId);
        else this.busy.set(item.organizationId, left);
        this.tasks.delete(task);
        this.loop.wake();
      });
    this.tasks.add(task);
  }

  private async handle(item: DueMedia): Promise<void> {
    const key = `${item.bypassReuse ? 'refresh' : 'reuse'} ${item.image}`;
    let outcome = this.inFlight.get(key);
    if (!outcome) {
      outcome = this.resolve(item).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, outcome);
    }
    let state: MediaState;
    let retryable = false;
    try {
      state = await outcome;
    } catch (error) {
      const failure = error instanceof MediaFailure ? error : new MediaFailure('FETCH_FAILED', String((error as Error)?.message ?? error));
      if (!(error instanceof MediaFailure))
        this.logger.warn({ err: error, tokenId: item.tokenId }, 'token image fetch failed unexpectedly');
      state = { status: 'failed', error: failure.error, width: null, height: null, contentType: null, sha256: null };
      retryable = failure.retryable;
    }
    if (this.stopped) return;
    await this.record(item, state, retryable);
  }

  /** The outcome for an image URL: an original fetched before (unless refreshed), or fetched and processed now. */
  private async resolve(item: DueMedia): Promise<MediaState> {
    if (!item.bypassReuse) {
      const known = await this.repository.reusable(item.image);
      if (known) return ok(known);
    }
    const { bytes, fetched } = await this.fetcher.fetch(item.image);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const image = (await this.repository.image(sha256)) ?? (await this.process(sha256, bytes));
    if (fetched) await this.repository.recordSource(item.image, sha256);
    return ok(image);
  }

  /** Makes and stores the thumbnails of an original seen for the first time, then records it. */
  private async process(sha256: string, bytes: Buffer): Promise<KnownImage> {
    await this.acquireProcessing();
    let processed: Awaited<ReturnType<typeof makeThumbnails>>;
    try {
      processed = await makeThumbnails(bytes);
    } finally {
      this.releaseProcessing();
    }
    const image: KnownImage = { sha256, contentType: processed.contentType, width: processed.width, height: processed.height };
    const thumbnails = new Map([...processed.thumbnails].map(([width, thumbnail]) => [width, thumbnail.bytes]));
    // One transaction: the original is recorded only with its thumbnails stored (files are written before it commits).
    await this.em.fork().transactional(async (em) => {
      await this.repository.recordImage(em, { ...image, byteSize: bytes.length });
      await this.storage.put(em, sha256, thumbnails);
    });
    return image;
  }

  /** Stores the outcome on the token, with the webhook when it differs from what the token showed. */
  private async record(item: DueMedia, state: MediaState, retryable: boolean): Promise<void> {
    const attempts = state.status === 'failed' ? item.attempts + 1 : 0;
    const dueAt = state.status === 'failed' ? nextMediaAttempt(attempts, retryable, new Date()) : null;
    await this.em.fork().transactional(async (em) => {
      const before = await this.repository.complete(em, item, state, { attempts, dueAt });
      // Null: the image changed or was refreshed meanwhile; that newer request decides.
      if (before === null || sameMediaOutcome(before, state)) return;
      this.events.publish(
        em,
        item.organizationId,
        tokenUpdated({ id: item.tokenId, contractAddress: item.contractAddress }, { media: state }),
      );
    });
  }

  private async acquireProcessing(): Promise<void> {
    while (this.processing >= PROCESSING_CONCURRENCY) await new Promise<void>((resolve) => this.processingWaiters.push(resolve));
    this.processing++;
  }

  private releaseProcessing(): void {
    this.processing--;
    this.processingWaiters.shift()?.();
  }
}
