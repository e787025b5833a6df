import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Job, JobOptions, Queue, QueueOptions } from 'bull';
import { withTimeout } from '../../../common/async/with-timeout';
import type { AppConfig } from '../../../config/app-config';

export const WEBHOOK_QUEUE = 'webhooks';
/** Where an organization's burst goes, so it does not queue ahead of other organizations. */
export const WEBHOOK_BULK_QUEUE = 'webhooks-bulk';
/** Events per organization within 10 s that still count as ordinary traffic. */
export const BURST_THRESHOLD = 200;
/** The first stage: newly relayed events (or one recovered) to judge into their webhooks. */
export const JUDGE_EVENTS_JOB = 'judge-events';
/** The second stage: one webhook's next attempt (retries, recovery, redelivery, replay, test sends). */
export const ATTEMPT_WEBHOOK_JOB = 'attempt-webhook';
/**
 * The one job name of releases before the stages had names of their own, its payload either
 * stage's. Jobs of that name still in Redis after an upgrade are carried out by their payload.
 */
export const LEGACY_DELIVER_JOB = 'deliver';
const RETRY_BACKOFF = 'webhook-retry';
/** Newly relayed events per job. */
export const EVENTS_PER_JOB = 10;
/** How long the API waits for Redis before leaving a webhook to the reconciler. */
const API_ENQUEUE_TIMEOUT_MS = 1000;
/** How long the relay waits for Redis before leaving its events unrelayed for the next pass. */
const RELAY_ENQUEUE_TIMEOUT_MS = 5000;
/** Jobs per Redis round trip. */
const ENQUEUE_CHUNK = 500;

/**
 * A job only says "look at these now"; PostgreSQL holds the state, so a job can run twice, or be
 * lost with Redis, without a webhook being sent twice in a row or never. Each stage has a job
 * name and a payload of its own.
 */
export interface JudgeEventsJob {
  eventIds: string[];
}
export interface AttemptWebhookJob {
  webhookId: string;
}
type WebhookJobData = JudgeEventsJob | AttemptWebhookJob;
type NamedJob = { name: string; data: WebhookJobData; opts: JobOptions };

/** What the worker does with each stage's job. */
export interface WebhookStages {
  judgeEvents(job: JudgeEventsJob): Promise<void>;
  attemptWebhook(job: AttemptWebhookJob): Promise<void>;
}

/**
 * The stage a job belongs to, by its name; a legacy `deliver` job by the shape of its payload.
 * Null for a job no stage takes.
 */
export function stageOf(
  name: string,
  data: unknown,
): { stage: 'judgeEvents'; job: JudgeEventsJob } | { stage: 'attemptWebhook'; job: AttemptWebhookJob } | null {
  const payload = (data ?? {}) as Partial<JudgeEventsJob & AttemptWebhookJob>;
  const judge = Array.isArray(payload.eventIds) ? { stage: 'judgeEvents' as const, job: { eventIds: payload.eventIds } } : null;
  const attempt =
    typeof payload.webhookId === 'string' ? { stage: 'attemptWebhook' as const, job: { webhookId: payload.webhookId } } : null;
  if (name === JUDGE_EVENTS_JOB) return judge;
  if (name === ATTEMPT_WEBHOOK_JOB) return attempt;
  if (name === LEGACY_DELIVER_JOB) return attempt ?? judge;
  return null;
}

/** Bull's settings for the webhook queues (a job whose worker died is picked up again once its lock expires). */
export function webhookQueueSettings(config: AppConfig): QueueOptions['settings'] {
  return {
    lockDuration: config.webhook.jobLockMs,
    lockRenewTime: Math.floor(config.webhook.jobLockMs / 2),
    stalledInterval: config.webhook.jobLockMs,
    // Never give up on a job: PostgreSQL decides when a webhook has failed.
    maxStalledCount: 1_000_000,
    backoffStrategies: { [RETRY_BACKOFF]: retryBackoff },
  };
}

/**
 * A webhook's job id is the webhook id, which makes enqueueing idempotent while a job is waiting
 * or delayed; a relay job's is derived from its events, so relaying them again is a no-op.
 * Attempts are counted in PostgreSQL against the retry schedule, so Bull's own limit is only a
 * backstop.
 */
function jobOptions(jobId: string, delayMs?: number): JobOptions {
  return {
    jobId,
    ...(delayMs ? { delay: delayMs } : {}),
    attempts: 100_000,
    backoff: { type: RETRY_BACKOFF },
    // Bull keeps every failure's stack with the job and writes the whole list back at each one; a
    // webhook looked at many times (waiting for a slot, or retried) would carry hundreds. The last
    // one says why the job is waiting.
    stackTraceLimit: 1,
    removeOnComplete: true,
    removeOnFail: true,
  };
}

export function relayJobId(eventIds: readonly string[]): string {
  return `events-${eventIds[0]}-${eventIds[eventIds.length - 1]}-${eventIds.length}`;
}

/** The relay's jobs for `eventIds`, EVENTS_PER_JOB to a job. */
export function relayJobs(eventIds: readonly string[]): NamedJob[] {
  const jobs: NamedJob[] = [];
  for (let i = 0; i < eventIds.length; i += EVENTS_PER_JOB) {
    const group = eventIds.slice(i, i + EVENTS_PER_JOB);
    jobs.push({ name: JUDGE_EVENTS_JOB, data: { eventIds: group }, opts: jobOptions(relayJobId(group)) });
  }
  return jobs;
}

function webhookJob(webhookId: string, delayMs?: number): NamedJob {
  return { name: ATTEMPT_WEBHOOK_JOB, data: { webhookId }, opts: jobOptions(webhookId, delayMs) };
}

/** Thrown by the processor so that Bull runs the job again after `delayMs`. */
export class RetryLaterError extends Error {
  constructor(
    readonly delayMs: number,
    reason: string,
  ) {
    super(reason);
    this.name = 'RetryLaterError';
  }
}

/** Bull's custom backoff: the processor decides the delay (schedule, jitter, receiver busy). */
export function retryBackoff(_attemptsMade: number, error: Error): number {
  return delayOf(error);
}

/** The delay a failure asked for before the next look, or a second. */
export function delayOf(reason: unknown): number {
  const delayMs = (reason as { delayMs?: unknown } | null)?.delayMs;
  return typeof delayMs === 'number' ? Math.max(1, delayMs) : 1000;
}

/** How long after a running job is found busy it is woken again (it may have been held back meanwhile). */
const WAKE_AGAIN_MS = 200;

const MOVING_STATES = new Set(['waiting', 'delayed', 'active', 'paused']);

/**
 * The one owner of the webhook queues: every job is added, looked up and processed here. Two
 * lanes: `main`, and `bulk` for an organization's burst so it does not queue ahead of others.
 */
@Injectable()
export class WebhookJobs {
  private readonly logger = new Logger('WebhookJobs');

  constructor(
    @InjectQueue(WEBHOOK_QUEUE) private readonly main: Queue<WebhookJobData>,
    @InjectQueue(WEBHOOK_BULK_QUEUE) private readonly bulk: Queue<WebhookJobData>,
  ) {}

  /** Newly relayed events, per lane; throws (and the events stay unrelayed) when Redis does not take them in time. */
  async addRelayed(lanes: { main: readonly string[]; bulk: readonly string[] }): Promise<void> {
    await withTimeout(
      Promise.all([
        lanes.main.length > 0 ? this.main.addBulk(relayJobs(lanes.main)) : null,
        lanes.bulk.length > 0 ? this.bulk.addBulk(relayJobs(lanes.bulk)) : null,
      ]),
      RELAY_ENQUEUE_TIMEOUT_MS,
      'enqueueing webhooks timed out',
    );
  }

  /** Webhooks to look at after their delay (each its own job); throws when Redis refuses. */
  async addWebhooks(later: readonly { id: string; delayMs?: number }[]): Promise<void> {
    for (let i = 0; i < later.length; i += ENQUEUE_CHUNK) {
      await this.main.addBulk(later.slice(i, i + ENQUEUE_CHUNK).map(({ id, delayMs }) => webhookJob(id, delayMs)));
    }
  }

  /**
   * Best effort, for the API: when Redis is unavailable the webhooks are already pending and due
   * in PostgreSQL, and the reconciler enqueues them once Redis is back.
   */
  async offerWebhooks(ids: readonly string[]): Promise<void> {
    try {
      await withTimeout(this.addWebhooks(ids.map((id) => ({ id }))), API_ENQUEUE_TIMEOUT_MS, 'queue unavailable');
    } catch (error) {
      this.logger.warn({ err: error, webhookIds: ids.slice(0, 10), count: ids.length }, 'could not enqueue now; the reconciler will');
    }
  }

  /**
   * Recovery: queues each of these whose job will not run any more (lost with Redis, or left as
   * a fragment); returns how many it queued. A burst waiting its turn in the bulk lane is left
   * there rather than queued a second time ahead of other organizations.
   */
  async addIfIdle(work: { eventIds: readonly string[]; webhookIds: readonly string[] }): Promise<string[]> {
    const idle = async (jobId: string) => !(await this.isMoving(this.bulk, jobId)) && !(await this.isMoving(this.main, jobId));
    const events = (await Promise.all(work.eventIds.map(async (id) => ((await idle(relayJobId([id]))) ? id : null)))).filter(
      (id): id is string => id !== null,
    );
    const webhooks = (await Promise.all(work.webhookIds.map(async (id) => ((await idle(id)) ? id : null)))).filter(
      (id): id is string => id !== null,
    );
    const jobs = [...events.flatMap((id) => relayJobs([id])), ...webhooks.map((id) => webhookJob(id))];
    if (jobs.length > 0) await this.main.addBulk(jobs);
    return [...events, ...webhooks];
  }

  /**
   * Webhooks to look at now, whatever their job is doing: a delayed one is moved forward, a
   * missing one is queued; one running right now is looked at again shortly after it is done.
   */
  async wake(ids: readonly string[], again = true): Promise<void> {
    const running: string[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const job = await this.main.getJob(id);
      const state = job ? await job.getState() : null;
      if (state === 'delayed') await job!.promote().catch(() => missing.push(id));
      else if (state === 'active') running.push(id);
      else if (state !== 'waiting' && state !== 'paused') missing.push(id);
    }
    if (missing.length > 0) await this.addIfIdle({ eventIds: [], webhookIds: missing });
    if (again && running.length > 0) setTimeout(() => void this.wake(running, false).catch(() => undefined), WAKE_AGAIN_MS).unref();
  }

  /**
   * Runs every job of both lanes through its stage, each lane with the full concurrency (a burst
   * is kept aside, not slowed down). One handler for every name: Bull adds up the concurrency of
   * each named handler, so a handler per stage would multiply the worker's slots.
   */
  process(concurrency: number, stages: WebhookStages): void {
    const handle = async (job: Job<WebhookJobData>): Promise<void> => {
      const found = stageOf(job.name, job.data);
      if (found === null) {
        // Retrying would not teach it a name: PostgreSQL still holds whatever it was about, and recovery finds that.
        this.logger.warn({ job: job.name, jobId: job.id }, 'dropped a webhook job of no known stage');
        return;
      }
      return found.stage === 'judgeEvents' ? stages.judgeEvents(found.job) : stages.attemptWebhook(found.job);
    };
    for (const queue of [this.main, this.bulk]) {
      // Bull's run loop rejects when Redis fails before it is ready (or the app stops meanwhile);
      // left unheard, that rejection would crash the process instead of being reported.
      queue
        .process('*', concurrency, handle)
        .catch((error: unknown) => this.logger.error({ err: error, queue: queue.name }, 'webhook queue processing stopped'));
    }
  }

  /** Jobs per state, both lanes together (the queue-depth gauge). */
  async counts(): Promise<Record<string, number>> {
    const [main, bulk] = await Promise.all([this.main.getJobCounts(), this.bulk.getJobCounts()]);
    const counts: Record<string, number> = { ...main };
    for (const [state, value] of Object.entries(bulk as unknown as Record<string, number>)) counts[state] = (counts[state] ?? 0) + value;
    return counts;
  }

  /**
   * Whether a job under this id will still run. A job is judged by its state, not by its key: when
   * Redis is emptied while a job is in flight, Bull's failure bookkeeping writes part of the job
   * hash back (failedReason, stacktrace, attemptsMade, processedOn) with the job in no list. Such a
   * fragment, like a finished job, would make re-adding the id a no-op forever, so it is removed.
   */
  private async isMoving(queue: Queue<WebhookJobData>, id: string): Promise<boolean> {
    const job = await queue.getJob(id);
    if (!job) return false;
    if (MOVING_STATES.has(await job.getState())) return true;
    // Bull refuses to remove a job whose lock is held: a worker is on it right now.
    return job.remove().then(
      () => false,
      () => true,
    );
  }
}
